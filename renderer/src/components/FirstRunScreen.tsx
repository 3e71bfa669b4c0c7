import {useState} from "react";
import type {ModelStatus} from "../../../src/core/common/api/index.js";

/** Shown until a model is loaded: what Cleanroom needs, and where to point it. */
export function FirstRunScreen({model, onLoadModel, onOpenModels}: {
    model: ModelStatus | null, onLoadModel: (path: string) => Promise<unknown>, onOpenModels: () => void
}) {
    const [path, setPath] = useState(model?.path ?? "");
    const loading = model?.state === "loading";
    return (
        <main className="first-run" aria-label="Welcome">
            <div className="first-run-card">
                <div className="brand big"><span className="brand-mark" aria-hidden="true">◇</span> Cleanroom</div>
                <h1>Choose a local model</h1>
                <p>Cleanroom chats entirely on this machine with a GGUF model. Each conversation gets its own context, and its memory is zeroed and verified when the session ends.</p>
                <div className="first-run-models">
                    <button type="button" className="button button-primary" onClick={onOpenModels}>Browse models</button>
                    <span className="small muted">Download a recommended model, use one that LM Studio, Ollama, Jan or GPT4All already has, or import a GGUF file. Each shows whether it fits this machine.</span>
                </div>
                <p className="small muted">Or enter the path of a GGUF file to load it once:</p>
                <form className="field-row" onSubmit={(event) => {
                    event.preventDefault();
                    if (path.trim() !== "")
                        void onLoadModel(path.trim());
                }}>
                    <input aria-label="Model file path" placeholder="/path/to/model.gguf" value={path} spellCheck={false}
                        onChange={(event) => setPath(event.target.value)} disabled={loading} />
                    <button type="submit" className="button button-primary" disabled={loading || path.trim() === ""}>
                        {loading ? "Loading…" : "Load model"}
                    </button>
                </form>
                {model?.state === "error" && model.error != null && (
                    <p className="banner banner-error" role="alert"><strong>The model could not be loaded.</strong> {model.error.message}</p>
                )}
            </div>
        </main>
    );
}
