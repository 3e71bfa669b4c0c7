import {useEffect, useState} from "react";
import type {ApiInput, ApiOutput, AppSettings, GpuSetting, ModelStatus} from "../../../src/core/common/api/index.js";
import type {Conversation, ConversationPolicy} from "../../../src/core/common/types.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {DocumentSearchSettings} from "./DocumentSearchSettings.js";
import {EngineSettings} from "./EngineSettings.js";
import {LocalApiServerSettings} from "./LocalApiServerSettings.js";
import {NeverSendSettings} from "./NeverSendSettings.js";
import {PassphraseSettings} from "./PassphraseSettings.js";
import {ResumeSnapshotSettings} from "./ResumeSnapshotSettings.js";
import {Switch} from "./Switch.js";

type Draft = {modelPath: string, threads: string, contextSize: string, gpu: GpuSetting, cloudEndpoint: string, cloudModel: string, cloudApiKey: string};

const gpuSettings: GpuSetting[] = ["auto", "metal", "cuda", "vulkan", "off"];

/** Model, engine and cloud settings, and the open conversation's policy. */
export function SettingsDialog({client, settings, model, pendingRestart, conversation, onSave, onLoadModel, onSetPolicy, onOpenModels, onDeleteEverything, onClose}: {
    client: AppCoreClient, settings: AppSettings, model: ModelStatus | null, pendingRestart: string[], conversation: Conversation | null,
    onSave: (changes: ApiInput<"settings.set">) => Promise<unknown>, onLoadModel: (path: string) => Promise<unknown>,
    onSetPolicy: (policy: ConversationPolicy) => void, onOpenModels: () => void,
    onDeleteEverything: () => Promise<ApiOutput<"app.deleteEverything"> | undefined>, onClose: () => void
}) {
    const [draft, setDraft] = useState<Draft>(() => draftOf(settings));
    const [saving, setSaving] = useState(false);
    useEffect(() => {
        const onKey = (event: KeyboardEvent) => {
            if (event.key === "Escape")
                onClose();
        };
        window.addEventListener("keydown", onKey);
        return () => window.removeEventListener("keydown", onKey);
    }, [onClose]);

    const field = (name: keyof Draft) => ({
        value: draft[name],
        onChange: (event: {target: {value: string}}) => setDraft((current) => ({...current, [name]: event.target.value}))
    });

    const save = async () => {
        setSaving(true);
        try {
            await onSave({
                threads: optionalNumber(draft.threads),
                contextSize: optionalNumber(draft.contextSize),
                gpu: draft.gpu,
                cloudEndpoint: draft.cloudEndpoint.trim() === "" ? null : draft.cloudEndpoint.trim(),
                cloudModel: draft.cloudModel.trim() === "" ? null : draft.cloudModel.trim(),
                ...(draft.cloudApiKey !== "" ? {cloudApiKey: draft.cloudApiKey} : {})
            });
            setDraft((current) => ({...current, cloudApiKey: ""}));
        } finally {
            setSaving(false);
        }
    };

    return (
        <div className="dialog-backdrop" onMouseDown={(event) => {
            if (event.target === event.currentTarget)
                onClose();
        }}>
            <div className="dialog" role="dialog" aria-modal="true" aria-label="Settings">
                <header className="dialog-header">
                    <h2>Settings</h2>
                    <button type="button" className="icon-button" aria-label="Close settings" onClick={onClose}>×</button>
                </header>

                <fieldset>
                    <legend>Local model</legend>
                    <div className="settings-models">
                        <span className="small muted">Download, find, import and choose the default model, with whether each fits this machine.</span>
                        <button type="button" className="button" onClick={onOpenModels}>Models…</button>
                    </div>
                    <label className="field">
                        <span>Model file (GGUF)</span>
                        <div className="field-row">
                            <input {...field("modelPath")} placeholder="/path/to/model.gguf" spellCheck={false} />
                            <button type="button" className="button" disabled={draft.modelPath.trim() === "" || model?.state === "loading"}
                                onClick={() => void onLoadModel(draft.modelPath.trim())}>Load</button>
                        </div>
                        <small>{modelLine(model)}</small>
                        {model?.state === "ready" && model.info?.contextSizeNotice != null && <small role="note">{model.info.contextSizeNotice}</small>}
                    </label>
                    <div className="field-grid">
                        <label className="field">
                            <span>Threads</span>
                            <input {...field("threads")} inputMode="numeric" placeholder="measured" />
                        </label>
                        <label className="field">
                            <span>Context size (tokens)</span>
                            <input {...field("contextSize")} inputMode="numeric" placeholder="model default" />
                        </label>
                        <label className="field">
                            <span>GPU</span>
                            <select value={draft.gpu} aria-label="GPU"
                                onChange={(event) => setDraft((current) => ({...current, gpu: gpuSettings.find((gpu) => gpu === event.target.value) ?? "auto"}))}>
                                <option value="auto">auto (a usable GPU, else the CPU)</option>
                                <option value="metal">Metal</option>
                                <option value="cuda">CUDA</option>
                                <option value="vulkan">Vulkan</option>
                                <option value="off">off (CPU only)</option>
                            </select>
                        </label>
                    </div>
                    {pendingRestart.length > 0 && <p className="notice">Threads, context size and GPU apply when the core next starts.</p>}
                </fieldset>

                <EngineSettings client={client} />

                <DocumentSearchSettings client={client} settings={settings} onSave={onSave} />

                <ResumeSnapshotSettings settings={settings} onSave={onSave} />

                <fieldset>
                    <legend>Shared cloud (off by default)</legend>
                    <Switch label="Cloud fallback" checked={settings.cloud.fallback}
                        description="Let conversations marked “cloud allowed” use the cloud endpoint; every request carries canaries."
                        onChange={(checked) => void onSave({cloudFallback: checked})} />
                    <label className="field">
                        <span>Cloud endpoint</span>
                        <input {...field("cloudEndpoint")} placeholder="https://api.example.com/v1" spellCheck={false} />
                    </label>
                    <label className="field">
                        <span>Cloud model</span>
                        <input {...field("cloudModel")} placeholder="model name" spellCheck={false} />
                    </label>
                    <label className="field">
                        <span>API key</span>
                        <input {...field("cloudApiKey")} type="password" autoComplete="off" aria-label="API key"
                            placeholder={settings.cloud.apiKeyStored ? "stored (type to replace)" : settings.cloud.apiKeyReentry != null ? "enter the key again" : "not set"} />
                        <small>Kept in: {settings.cloud.keyStorage}{settings.cloud.apiKeyStored ? " · a key is stored for this endpoint" : ""}</small>
                        {settings.cloud.apiKeyReentry != null && <small className="warning-text" role="status">{settings.cloud.apiKeyReentry}</small>}
                        {settings.cloud.keyStorageWarning != null && <small className="warning-text">{settings.cloud.keyStorageWarning}</small>}
                    </label>
                    {(settings.cloud.apiKeyStored || settings.cloud.apiKeyReentry != null) && (
                        <button type="button" className="text-button" onClick={() => void onSave({cloudApiKey: null})}>Forget stored key</button>
                    )}
                </fieldset>

                <NeverSendSettings settings={settings} onSave={onSave} />

                <LocalApiServerSettings client={client} />

                {conversation != null && (
                    <fieldset>
                        <legend>This conversation</legend>
                        <Switch label="Allow cloud for this conversation" checked={conversation.policy === "cloud-allowed"}
                            description={conversation.policy === "local" ? "Local only: nothing leaves this machine." : "Cloud allowed when cloud fallback is on."}
                            onChange={(checked) => onSetPolicy(checked ? "cloud-allowed" : "local")} />
                    </fieldset>
                )}

                <PassphraseSettings client={client} settings={settings} onSave={onSave} />

                <DeleteEverything onDelete={onDeleteEverything} />

                <footer className="dialog-footer">
                    <button type="button" className="button" onClick={onClose}>Close</button>
                    <button type="button" className="button button-primary" disabled={saving} onClick={() => void save()}>Save</button>
                </footer>
            </div>
        </div>
    );
}

const confirmPhrase = "delete everything";

/**
 * "Delete everything": a first click asks for the phrase to be typed, and only then does the
 * destructive button work. The core's report follows: each table and file it checked, each clean.
 */
function DeleteEverything({onDelete}: {onDelete: () => Promise<ApiOutput<"app.deleteEverything"> | undefined>}) {
    const [asking, setAsking] = useState(false);
    const [typed, setTyped] = useState("");
    const [deleting, setDeleting] = useState(false);
    const [report, setReport] = useState<ApiOutput<"app.deleteEverything"> | null>(null);
    const confirmed = typed.trim().toLowerCase() === confirmPhrase;
    const run = async () => {
        setDeleting(true);
        try {
            const result = await onDelete();
            if (result != null) {
                setReport(result);
                setAsking(false);
                setTyped("");
            }
        } finally {
            setDeleting(false);
        }
    };
    return (
        <fieldset className="danger-zone">
            <legend>Delete everything</legend>
            <p className="field-hint">Ends and scrubs every session, then deletes every conversation, the audit trail, fingerprints,
                canary hashes, settings and registered-model records, leaving none of their text in the database or its journal.
                Model files are kept. This cannot be undone.</p>
            {!asking && (
                <button type="button" className="button button-danger" onClick={() => {
                    setAsking(true);
                    setReport(null);
                }}>Delete everything…</button>
            )}
            {asking && (
                <>
                    <label className="field">
                        <span>Type “{confirmPhrase}” to confirm</span>
                        <input value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" spellCheck={false} />
                    </label>
                    <div className="button-row">
                        <button type="button" className="button" onClick={() => {
                            setAsking(false);
                            setTyped("");
                        }}>Cancel</button>
                        <button type="button" className="button button-danger" disabled={!confirmed || deleting} onClick={() => void run()}>
                            {deleting ? "Deleting…" : "Delete everything now"}
                        </button>
                    </div>
                </>
            )}
            {report != null && (
                <div role="status" aria-label="Delete everything report" className="wipe-report">
                    <p>{report.clean ? `Everything was deleted: ${report.checks.length} checks, each clean.` : "Something remains: see below."}
                        {report.scrubs.length > 0 ? ` ${report.scrubs.length} session(s) scrubbed${report.scrubs.every((scrub) => scrub.verified) ? ", verified" : ""}.` : ""}
                        {report.modelFilesKept > 0 ? ` ${report.modelFilesKept} model file(s) kept.` : ""}</p>
                    <ul>
                        {report.checks.map((check) => (
                            <li key={check.path}>
                                <strong>{check.remains ? "Remains" : "Clean"}</strong> · {check.what}{check.removed ? " (removed)" : ""}
                            </li>
                        ))}
                    </ul>
                </div>
            )}
        </fieldset>
    );
}

function draftOf(settings: AppSettings): Draft {
    return {
        modelPath: settings.modelPath ?? "",
        threads: settings.threads == null ? "" : String(settings.threads),
        contextSize: settings.contextSize == null ? "" : String(settings.contextSize),
        gpu: settings.gpu,
        cloudEndpoint: settings.cloud.endpoint ?? "",
        cloudModel: settings.cloud.model ?? "",
        cloudApiKey: ""
    };
}

function optionalNumber(text: string): number | null {
    return text.trim() === "" ? null : Number(text.trim());
}

function modelLine(model: ModelStatus | null): string {
    if (model == null || model.state === "none")
        return "No model loaded.";
    if (model.state === "loading")
        return "Loading…";
    if (model.state === "error")
        return `Failed: ${model.error?.message ?? "unknown error"}`;
    const where = model.info == null ? "" : model.info.gpu == null ? " · CPU" : ` · ${model.info.gpu} ${model.info.gpuLayers}/${model.info.modelLayers} layers`;
    return `Loaded: ${model.info?.architecture ?? "model"} · ${model.info?.contextSize ?? "?"} tokens · ${model.info?.threads ?? "?"} threads${where}`;
}
