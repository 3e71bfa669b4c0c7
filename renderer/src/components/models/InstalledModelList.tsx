import type {InstalledModel} from "../../../../src/core/common/api/index.js";
import {formatBytes, formatCount} from "../../format.js";
import {FitBadges} from "./FitBadges.js";

const originNames: Record<string, string> = {
    download: "Downloaded", import: "Imported", lmstudio: "From LM Studio", ollama: "From Ollama", jan: "From Jan", gpt4all: "From GPT4All"
};

/** The registered models, with the default marked and Make default on the others. */
export function InstalledModelList({models, settingDefaultId, onMakeDefault}: {
    models: InstalledModel[], settingDefaultId: string | null, onMakeDefault: (id: string) => void
}) {
    if (models.length === 0)
        return <p className="muted">None yet: download a recommended model, use one found on this computer, or import a GGUF file.</p>;

    return (
        <ul className="model-rows" aria-label="Registered models">
            {models.map((model) => (
                <li key={model.id} className="model-row">
                    <div className="model-row-main">
                        <span className="model-row-title">
                            {model.name}
                            {model.isDefault && <span className="badge badge-accent">Default</span>}
                            {model.isLoaded && <span className="badge badge-muted">Loaded</span>}
                        </span>
                        <span className="small muted">
                            {originNames[model.origin] ?? model.origin} · {formatBytes(model.fileBytes)}
                            {model.fit != null && ` · context up to ${formatCount(model.fit.maxContextSize)} tokens`}
                        </span>
                        <span className="mono small muted path">{model.path}</span>
                        {model.problem != null && <span className="inline-error">{model.problem}</span>}
                    </div>
                    <div className="model-row-side">
                        {model.fit != null && <FitBadges fit={model.fit} />}
                        {!model.isDefault && (
                            <button type="button" className="button button-primary" aria-label={`Make ${model.name} the default`}
                                disabled={settingDefaultId != null || !model.present} onClick={() => onMakeDefault(model.id)}>
                                {settingDefaultId === model.id ? "Loading…" : "Make default"}
                            </button>
                        )}
                    </div>
                </li>
            ))}
        </ul>
    );
}
