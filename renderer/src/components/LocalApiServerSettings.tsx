import {useCallback, useEffect, useState} from "react";
import type {ApiKeyInfoWire, LocalApiServerStatus} from "../../../src/core/common/api/apiServerSchemas.js";
import {copyText} from "../copyText.js";
import {describeError} from "../describeError.js";
import {useCoreEvent} from "../hooks/useCoreEvent.js";
import {formatTime, shortId} from "../format.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import {Switch} from "./Switch.js";

type Message = {text: string, error: boolean};

/**
 * Settings → Local API server (#29): an OpenAI-compatible server for other apps on this machine, on
 * the model the app has loaded, every request in a context of its own scrubbed when it ends. Off
 * until switched on, and on again at the next start while left on (a start that failed, say its
 * port taken, is shown here); the port; the base URL to copy and the endpoints; API keys with labels
 * and ids (a new key is shown once, with a copy button; only its hash is kept), each revocable.
 */
export function LocalApiServerSettings({client}: {client: AppCoreClient}) {
    const [status, setStatus] = useState<LocalApiServerStatus | null>(null);
    const [keys, setKeys] = useState<ApiKeyInfoWire[]>([]);
    const [port, setPort] = useState("");
    const [label, setLabel] = useState("");
    const [newKey, setNewKey] = useState<{label: string, secret: string} | null>(null);
    const [busy, setBusy] = useState(false);
    const [message, setMessage] = useState<Message | null>(null);
    /** The key whose Revoke was clicked once: revoking cannot be undone, so it asks again. */
    const [confirmingRevoke, setConfirmingRevoke] = useState<string | null>(null);

    const refresh = useCallback(async () => {
        const [current, stored] = await Promise.all([client.call("apiServer.status", {}), client.call("apiKeys.list", {})]);
        setStatus(current);
        setKeys(stored.keys);
        return current;
    }, [client]);

    useEffect(() => {
        void refresh().then((current) => setPort(String(current.port)), () => undefined);
    }, [refresh]);
    // It also starts with the app (left on), and stops when the app locks: whoever changed it, the panel follows.
    useCoreEvent(client, "apiServer.status", (current) => {
        setStatus(current);
        if (current.running)
            setPort(String(current.port));
    });

    const run = async (work: () => Promise<unknown>) => {
        setBusy(true);
        setMessage(null);
        try {
            await work();
        } catch (failure) {
            setMessage({text: describeError(failure).detail, error: true});
        } finally {
            setBusy(false);
            await refresh().catch(() => undefined);
        }
    };

    const portNumber = Number(port);
    const portProblem = port.trim() === "" || !Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65_535
        ? "A port is a whole number from 0 (any free one) to 65535." : null;

    const toggle = (on: boolean) => void run(async () => {
        if (on) {
            const started = await client.call("apiServer.start", {port: portNumber});
            setPort(String(started.port));
        } else
            await client.call("apiServer.stop", {});
    });

    const createKey = () => void run(async () => {
        const created = await client.call("apiKeys.create", {label: label.trim()});
        setNewKey({label: created.key.label, secret: created.secret});
        setLabel("");
    });

    const revokeKey = (key: ApiKeyInfoWire) => void run(async () => {
        setConfirmingRevoke(null);
        await client.call("apiKeys.revoke", {id: key.id});
        if (newKey?.label === key.label)
            setNewKey(null);
        setMessage({text: `The key “${key.label}” is revoked: requests that send it are refused from now on.`, error: false});
    });

    const copy = async (text: string, what: string) => {
        const copied = await copyText(text);
        setMessage({text: copied ? `${what} copied.` : `${what} could not be copied: select it and copy it by hand.`, error: !copied});
    };

    return (
        <fieldset aria-label="Local API server">
            <legend>Local API server (off by default)</legend>
            <p className="field-hint">Other apps on this computer (editors, scripts, other assistants) can use the loaded model through an
                OpenAI-compatible API. Every request runs in a context of its own, zeroed and verified when it ends; nothing passes
                from one request to another.</p>
            <Switch label="Local API server" checked={status?.running === true} disabled={status == null || busy || (status.running !== true && portProblem != null)}
                description={status == null ? "…" : status.running
                    ? `Serving ${status.modelName ?? "no model (load one)"} on 127.0.0.1`
                    : status.modelName == null
                        ? status.startsWithApp ? "It was on when Cleanroom last closed: it comes back on once a model is loaded." : "No model is loaded: load one first, then turn it on."
                        : `Would serve ${status.modelName}`}
                onChange={toggle} />
            {status?.startProblem != null && !status.running && (
                <p className="banner" role="alert">It was on when Cleanroom last closed, but could not start again: {describeError(status.startProblem).detail}</p>
            )}
            <label className="field">
                <span>Port</span>
                <input type="number" inputMode="numeric" min={0} max={65_535} value={port} disabled={status?.running === true}
                    onChange={(event) => setPort(event.target.value)} />
                {portProblem != null && port !== "" && <small className="warning-text" role="status">{portProblem}</small>}
                {status?.running === true && <small>Turn the server off to change its port.</small>}
            </label>
            {status != null && (
                <label className="field">
                    <span>Base URL</span>
                    <div className="field-row">
                        <input readOnly value={status.baseUrl} aria-label="Base URL" spellCheck={false} onFocus={(event) => event.target.select()} />
                        <button type="button" className="button" onClick={() => void copy(status.baseUrl, "The base URL")}>Copy</button>
                    </div>
                    <small>{!status.keyRequired
                        ? "No keys: any program on this computer may call it (it listens on 127.0.0.1 only and refuses pages of other sites)."
                        : keys.length === 0 ? "Every key is revoked: it refuses every request until you turn it off and on again."
                            : `Each request needs ${keys.length === 1 ? "the key" : `one of the ${keys.length} keys`} below, sent as Authorization: Bearer <key>.`}</small>
                </label>
            )}
            {status?.modelName != null && (
                <label className="field">
                    <span>Model name</span>
                    <div className="field-row">
                        <input readOnly value={status.modelName} aria-label="Model name" spellCheck={false} className="mono" onFocus={(event) => event.target.select()} />
                        <button type="button" className="button" onClick={() => void copy(status.modelName!, "The model name")}>Copy</button>
                    </div>
                    <small>What clients send as <span className="mono">model</span>: the loaded model's file name without .gguf.</small>
                </label>
            )}
            {status?.running === true && (
                <p className="small muted" aria-label="Endpoints">Endpoints: <span className="mono">{status.endpoints.join(", ")}</span></p>
            )}

            <div aria-label="API keys">
                <span className="field-label">API keys</span>
                {keys.length === 0
                    ? <p className="small muted">No keys yet.</p>
                    : (
                        <ul className="api-keys">
                            {keys.map((key) => (
                                <li key={key.id} aria-label={`API key ${key.label}`}>
                                    <span>{key.label}</span>
                                    <span className="small muted mono" title={key.id}>id {shortId(key.id)}</span>
                                    <span className="small muted"> · made {formatTime(key.createdAt)} </span>
                                    {confirmingRevoke === key.id
                                        ? (
                                            <span role="group" aria-label={`Revoke ${key.label}?`}>
                                                <span className="small">Apps that send it are refused from their next request. </span>
                                                <button type="button" className="text-button danger" disabled={busy} onClick={() => revokeKey(key)}>Yes, revoke</button>
                                                <button type="button" className="text-button" onClick={() => setConfirmingRevoke(null)}>Cancel</button>
                                            </span>
                                        )
                                        : <button type="button" className="text-button" disabled={busy} onClick={() => setConfirmingRevoke(key.id)}>Revoke</button>}
                                </li>
                            ))}
                        </ul>
                    )}
                {newKey != null && (
                    <div className="notice" role="status" aria-label="New API key">
                        <p>The key “{newKey.label}”: copy it now, it is not shown again (Cleanroom keeps only its hash).</p>
                        <div className="field-row">
                            <input readOnly value={newKey.secret} aria-label="New key" spellCheck={false} className="mono" onFocus={(event) => event.target.select()} />
                            <button type="button" className="button" onClick={() => void copy(newKey.secret, "The key")}>Copy</button>
                            <button type="button" className="button" onClick={() => setNewKey(null)}>Done</button>
                        </div>
                    </div>
                )}
                <form className="field-row" onSubmit={(event) => {
                    event.preventDefault();
                    if (label.trim() !== "")
                        createKey();
                }}>
                    <input value={label} onChange={(event) => setLabel(event.target.value)} placeholder="label, e.g. my editor" aria-label="New key label"
                        maxLength={60} spellCheck={false} />
                    <button type="submit" className="button" disabled={busy || label.trim() === ""}>Create key</button>
                </form>
            </div>
            {message != null && <p className={message.error ? "banner" : "field-hint"} role={message.error ? "alert" : "status"}>{message.text}</p>}
        </fieldset>
    );
}
