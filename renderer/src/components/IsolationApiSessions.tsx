import {useCallback, useEffect, useState} from "react";
import type {ApiSession} from "../../../src/core/common/api/apiServerSchemas.js";
import {formatBytes, formatCount, formatTime, shortId} from "../format.js";
import {useCoreEvent} from "../hooks/useCoreEvent.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";

/** The audit events that change the list: a request of the local API server starting, refused, answered, or its context scrubbed. */
const listKinds = new Set(["api.request", "api.refused", "api.answered", "scrub.verified", "scrub.failed"]);

/**
 * The Isolation panel's list of the local API server's requests (#29), newest first, like its
 * conversations: completions and embeddings, the key's label and id (two keys may share a label),
 * the context the request had to itself, its scrub. Nothing shows
 * until another app has called the server.
 */
export function IsolationApiSessions({client}: {client: AppCoreClient}) {
    const [sessions, setSessions] = useState<ApiSession[]>([]);
    const refresh = useCallback(() => client.call("apiServer.sessions", {limit: 20}).then(({sessions: newest}) => setSessions(newest), () => undefined), [client]);
    useEffect(() => {
        void refresh();
    }, [refresh]);
    useCoreEvent(client, "audit.event", (event) => {
        if (listKinds.has(event.kind) && event.conversationId?.startsWith("api-") === true)
            void refresh();
    });

    if (sessions.length === 0)
        return null;
    return (
        <div className="card" aria-label="API sessions">
            <div className="card-title">API sessions</div>
            <ol className="api-sessions">
                {sessions.map((session) => <ApiSessionItem key={session.requestId} session={session} />)}
            </ol>
        </div>
    );
}

function ApiSessionItem({session}: {session: ApiSession}) {
    const {scrub} = session;
    const tone = scrub == null ? "" : scrub.verified ? "ok" : "fault";
    const kind = session.kind == null ? "" : ` · ${kindLabels[session.kind]}`;
    return (
        <li className={`api-session ${tone}`} aria-label={`API session ${session.tenant}${session.keyId == null ? "" : ` (key ${session.keyId})`}`}>
            <div><strong>{session.tenant}</strong> <span className="small muted">· {formatTime(session.at)}{kind} · {outcomeLabels[session.outcome]}</span></div>
            <dl className="facts">
                <dt>Key</dt>
                <dd className="mono" title={session.keyId ?? undefined}>{session.keyId == null ? "none (the server had no keys)" : `id ${shortId(session.keyId)}`}</dd>
                <dt>Context</dt>
                <dd className="mono" title={session.contextId ?? undefined}>{session.contextId == null ? "none (refused before evaluation)" : shortId(session.contextId)}</dd>
                <dt>Tokens</dt>
                <dd>{describeTokens(session)}</dd>
                <dt>Scrub</dt>
                <dd className={scrub != null && !scrub.verified ? "fault-text" : undefined}>
                    {scrub != null
                        ? `${scrub.verified ? "✓ verified" : "✗ NOT verified: context discarded"} · ${scrub.method === "no-kv-memory"
                            ? "no KV memory (an encoder): its state read back empty"
                            : `${formatBytes(scrub.bytesChecked)} read back, ${formatCount(scrub.nonZeroBytes)} non-zero`}`
                        : session.cacheSession != null ? "kept for its cache_salt: scrubbed when it idles out"
                            : session.outcome === "running" ? "when the request ends" : "no context to scrub"}
                </dd>
            </dl>
        </li>
    );
}

function describeTokens({kind, promptTokens, completionTokens, vectors}: ApiSession) {
    if (kind === "embeddings")
        return `${formatCount(promptTokens ?? 0)} input${vectors != null ? ` → ${formatCount(vectors)} ${vectors === 1 ? "vector" : "vectors"}` : ""}`;
    return `${formatCount(promptTokens ?? 0)} prompt${completionTokens != null ? ` + ${formatCount(completionTokens)} reply` : ""}`;
}

const kindLabels: Record<NonNullable<ApiSession["kind"]>, string> = {
    chat: "chat completion",
    text: "text completion",
    embeddings: "embeddings"
};

const outcomeLabels: Record<ApiSession["outcome"], string> = {
    running: "running",
    answered: "answered",
    failed: "failed",
    refused: "refused: too large for the context"
};
