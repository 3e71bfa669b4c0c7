import {useRef} from "react";

/** A small menu (a disclosure, keyboard-operable as it is) offering Markdown or JSON. */
export function ExportMenu({label, onExport}: {label: string, onExport: (format: "markdown" | "json") => void}) {
    const details = useRef<HTMLDetailsElement>(null);
    const pick = (format: "markdown" | "json") => {
        details.current?.removeAttribute("open");
        onExport(format);
    };
    return (
        <details className="menu" ref={details}>
            <summary className="button button-ghost button-small">{label}</summary>
            <div className="menu-items">
                <button type="button" className="text-button" onClick={() => pick("markdown")}>{label} as Markdown</button>
                <button type="button" className="text-button" onClick={() => pick("json")}>{label} as JSON</button>
            </div>
        </details>
    );
}
