import {memo, type ReactNode} from "react";
import type {CanaryCounts, IsolationReport, ModelStatus} from "../../../src/core/common/api/index.js";
import type {ScrubReport} from "../../../src/core/common/types.js";
import {formatBytes, formatCount, formatTime, shortId} from "../format.js";
import {AuditTimeline} from "./AuditTimeline.js";
import {IsolationDocuments} from "./IsolationDocuments.js";

export type PreviousSession = {title: string, scrub: ScrubReport, at: number};

/** What isolation looks like for the open conversation: its context, scrubs, routes, canaries and audit trail; `apiSessions`: the local API server's requests. */
export function IsolationPanel({report, previous, model, apiSessions}: {
    report: IsolationReport | null, previous: PreviousSession | null, model: ModelStatus["info"], apiSessions?: ReactNode
}) {
    return (
        <section className="isolation" aria-label="Isolation" tabIndex={0}>
            <h2 className="panel-title">Isolation</h2>
            {model != null && <BackendCard info={model} />}
            {previous != null && (
                <div className={`card scrub-card ${previous.scrub.verified ? "ok" : "fault"}`} aria-label="Previous session">
                    <div className="card-title">Previous session · {previous.title}</div>
                    <ScrubSummary scrub={previous.scrub} at={previous.at} />
                </div>
            )}
            {report == null
                ? <p className="muted">Open a conversation to see its isolation.</p>
                : <ReportBody report={report} />}
            {apiSessions}
        </section>
    );
}

/** Memoized on the report: the panel renders again with each streamed token of the chat beside it, the report does not change. */
const ReportBody = memo(function ReportBody({report}: {report: IsolationReport}) {
    const {live, lastScrub, canaries} = report;
    return (
        <>
            <div className="card">
                <div className="card-title">Context</div>
                {live == null
                    ? <p className="muted">No live context. A fresh one is built from the stored history at the next turn.</p>
                    : (
                        <dl className="facts">
                            <dt>Context id</dt><dd className="mono" title={live.contextId}>{shortId(live.contextId)}</dd>
                            <dt>KV size</dt><dd>{formatBytes(live.kvBytes)} · {formatCount(live.kvCells)} cells</dd>
                            <dt>Tokens used</dt><dd>{formatCount(live.tokensInContext)} / {formatCount(live.kvCells)}</dd>
                            <dt>Threads</dt><dd>{live.threads}</dd>
                        </dl>
                    )}
                <Meter used={live?.tokensInContext ?? 0} total={live?.kvCells ?? 1} />
            </div>

            <div className={`card scrub-card ${lastScrub == null ? "" : lastScrub.verified ? "ok" : "fault"}`}>
                <div className="card-title">Last scrub</div>
                {lastScrub == null
                    ? <p className="muted">No session of this conversation has ended yet.</p>
                    : <ScrubSummary scrub={lastScrub} at={lastScrub.at} />}
                <p className="small muted">{report.scrubs.verified} verified · {report.scrubs.failed} failed · {report.refusals} turns refused</p>
            </div>

            <CanaryCard canaries={canaries} />

            <IsolationDocuments documents={report.documents} />

            <div className="card" aria-label="Turn routes">
                <div className="card-title">Turn routes</div>
                {report.turns.length === 0
                    ? <p className="muted">No turns yet.</p>
                    : (
                        <ol className="routes">
                            {report.turns.map((turn, index) => (
                                <li key={`${turn.at}-${index}`}>
                                    <span>Turn {index + 1}</span>
                                    <span className={`route-chip route-${turn.route}`}>{turn.route}</span>
                                    <span className="mono small">{turn.contextId == null ? "" : shortId(turn.contextId)}</span>
                                </li>
                            ))}
                        </ol>
                    )}
            </div>

            <AuditTimeline events={report.events} />
        </>
    );
});

/** Where the model and its KV live, and whether the scrub's read-back is proved to read the KV from there. */
function BackendCard({info}: {info: NonNullable<ModelStatus["info"]>}) {
    const deviceFailed = info.deviceCheck != null && !info.deviceCheck.passed;
    const tone = info.kvReadBack === "unverified" || !info.stateCovered || deviceFailed ? "fault" : "ok";
    return (
        <div className={`card ${tone}`} aria-label="Backend">
            <div className="card-title">Backend</div>
            <dl className="facts">
                <dt>Runs on</dt><dd>{info.gpu == null ? "CPU" : `${info.gpu} · ${info.gpuDevice ?? "unnamed device"}`}</dd>
                <dt>Layers offloaded</dt><dd>{info.gpuLayers} / {info.modelLayers}</dd>
                {info.deviceCheck != null && (
                    <>
                        <dt>Device check</dt>
                        <dd className={deviceFailed ? "fault-text" : undefined}>
                            {info.deviceCheck.passed ? "passed the isolation probe" : `${info.deviceCheck.device}: FAILED, not used`}
                            {` (${info.deviceCheck.source === "probed" ? "probed" : "cached"}, ${Math.round(info.deviceCheck.durationMs)} ms)`}
                        </dd>
                    </>
                )}
                <dt>KV read-back</dt>
                <dd className={info.kvReadBack === "unverified" ? "fault-text" : undefined}>
                    {info.kvReadBack === "host" ? "from RAM" : info.kvReadBack === "verified" ? "from the device, verified" : "from the device: NOT verified"}
                </dd>
                <dt>Conversation state</dt>
                <dd className={info.stateCovered ? undefined : "fault-text"}>
                    {memoryLabels[info.sequenceMemory]}{info.stateCovered ? ", all zeroed and read back" : ": NOT all zeroed and read back"}
                </dd>
            </dl>
            {!info.stateCovered && (
                <p className="small fault-text" role="alert">
                    The scrub cannot zero and read back all of this model's conversation state ({info.stateCoverageProblem ?? "unknown"}).
                </p>
            )}
            {deviceFailed && (
                <p className="small fault-text" role="alert">
                    The GPU device {info.deviceCheck!.device} failed the isolation probe ({info.deviceCheck!.problem ?? "unknown"}): with another sequence's canary present, a request did not compute as on a fresh context, so the device is not used and the model runs on the CPU.
                </p>
            )}
            {info.kvReadBack === "unverified" && (
                <p className="small fault-text" role="alert">
                    The KV read-back from the GPU could not be verified ({info.kvReadBackProblem ?? "unknown"}): no scrub on this device is reported verified.
                </p>
            )}
        </div>
    );
}

const memoryLabels: Record<NonNullable<ModelStatus["info"]>["sequenceMemory"], string> = {
    kv: "KV cache",
    swa: "KV caches (sliding-window attention)",
    hybrid: "KV cache and recurrent state (hybrid)",
    recurrent: "recurrent state",
    none: "no KV memory (an encoder)"
};

function CanaryCard({canaries}: {canaries: CanaryCounts}) {
    const tone = canaries.repliesBlocked > 0 ? "fault" : canaries.repliesFlagged > 0 ? "warn" : canaries.checksPassed > 0 ? "ok" : "";
    return (
        <div className={`card canary-card ${tone}`} aria-label="Cloud canaries">
            <div className="card-title">Cloud canaries</div>
            <dl className="facts">
                <dt>Planted</dt><dd>{formatCount(canaries.planted)}</dd>
                <dt>Checks passed</dt><dd>{formatCount(canaries.checksPassed)}</dd>
                <dt>Replies blocked</dt><dd className={canaries.repliesBlocked > 0 ? "fault-text" : undefined}>{formatCount(canaries.repliesBlocked)}</dd>
                <dt>Replies flagged</dt><dd className={canaries.repliesFlagged > 0 ? "warning-text" : undefined}>{formatCount(canaries.repliesFlagged)}</dd>
            </dl>
        </div>
    );
}

function ScrubSummary({scrub, at}: {scrub: ScrubReport, at: number}) {
    return (
        <>
            <p className={`scrub-verdict ${scrub.verified ? "ok" : "fault"}`}>
                {scrub.verified ? "✓ Scrub verified" : "✗ Scrub NOT verified: context discarded"}
            </p>
            <dl className="facts">
                {scrub.method === "no-kv-memory" ? (
                    <><dt>Bytes zeroed</dt><dd>none: no KV memory</dd><dt>Read back</dt><dd>state empty</dd></>
                ) : (
                    <><dt>Bytes zeroed</dt><dd>{formatBytes(scrub.bytesZeroed)}</dd>
                        <dt>Read back</dt><dd>{formatBytes(scrub.bytesChecked)} · {formatCount(scrub.nonZeroBytes)} non-zero</dd></>
                )}
                <dt>Context</dt><dd className="mono" title={scrub.contextId}>{shortId(scrub.contextId)}</dd>
                <dt>When</dt><dd>{formatTime(at)} · {scrub.reason}</dd>
            </dl>
        </>
    );
}

function Meter({used, total}: {used: number, total: number}) {
    return <meter className="meter" aria-label="Context used" min={0} max={Math.max(1, total)} value={used} />;
}
