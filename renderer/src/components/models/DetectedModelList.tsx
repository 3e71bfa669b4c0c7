import type {DetectedModels} from "../../../../src/core/common/api/index.js";
import {formatBytes} from "../../format.js";

const appNames: Record<string, string> = {lmstudio: "LM Studio", ollama: "Ollama", jan: "Jan", gpt4all: "GPT4All"};

/** Models that other apps already downloaded, each with Use (registered in place, nothing copied). */
export function DetectedModelList({detected, usingPath, onUse, onSearchAgain}: {
    detected: DetectedModels | null, usingPath: string | null, onUse: (path: string) => void, onSearchAgain: () => void
}) {
    if (detected == null)
        return <p className="muted">Looking in LM Studio, Ollama, Jan and GPT4All folders…</p>;

    if (detected.models.length === 0)
        return (
            <p className="muted">
                No models from LM Studio, Ollama, Jan or GPT4All were found ({detected.searched.filter((dir) => dir.exists).length} of {detected.searched.length} folders exist).{" "}
                <button type="button" className="text-button" onClick={onSearchAgain}>Search again</button>
            </p>
        );

    return (
        <ul className="model-rows" aria-label="Models found on this computer">
            {detected.models.map((found) => {
                const name = found.names[0]!;
                return (
                    <li key={found.path} className="model-row">
                        <div className="model-row-main">
                            <span className="model-row-title">{name}</span>
                            <span className="small muted">{appNames[found.app] ?? found.app} · {formatBytes(found.fileBytes)}{found.names.length > 1 ? ` · also ${found.names.slice(1).join(", ")}` : ""}</span>
                            <span className="mono small muted path">{found.path}</span>
                        </div>
                        {found.registeredAs != null
                            ? <span className="badge badge-ok">Added</span>
                            : <button type="button" className="button" aria-label={`Use ${name}`} disabled={usingPath != null}
                                onClick={() => onUse(found.path)}>{usingPath === found.path ? "Checking…" : "Use"}</button>}
                    </li>
                );
            })}
        </ul>
    );
}
