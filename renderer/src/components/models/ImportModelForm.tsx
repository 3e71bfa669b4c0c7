import {useState} from "react";

/** Import a GGUF file by its full path; it is checked and used where it is. */
export function ImportModelForm({importing, onImport}: {importing: boolean, onImport: (path: string) => Promise<unknown>}) {
    const [path, setPath] = useState("");
    return (
        <form className="field-row import-form" onSubmit={(event) => {
            event.preventDefault();
            if (path.trim() !== "")
                void onImport(path.trim()).then((imported) => {
                    if (imported != null)
                        setPath("");
                });
        }}>
            <input aria-label="GGUF file path" placeholder="/full/path/to/model.gguf" value={path} spellCheck={false}
                onChange={(event) => setPath(event.target.value)} disabled={importing} />
            <button type="submit" className="button" disabled={importing || path.trim() === ""}>{importing ? "Checking…" : "Import"}</button>
        </form>
    );
}
