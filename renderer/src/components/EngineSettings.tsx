import {useCallback, useEffect, useState} from "react";
import type {EngineBuildProgress, EngineStatus} from "../../../src/core/common/api/index.js";
import {describeError} from "../describeError.js";
import {useCoreEvent} from "../hooks/useCoreEvent.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";

const phaseWords: Record<EngineBuildProgress["phase"], string> = {
    checking: "Looking for cmake and a C++ compiler…",
    preparing: "Unpacking and configuring llama.cpp…",
    compiling: "Compiling",
    finishing: "Putting the engine in place…"
};

/**
 * Settings → Engine: the llama.cpp binary that runs models (node-llama-cpp's prebuilt one, or one
 * built here), and, when the prebuilt one runs on the CPU and a compiler is here, "Build for this
 * CPU" (`engine.build`) with its progress and Cancel. The running core keeps its binary; the next
 * start uses the new one (docs/threads.md: it can read prompts much faster).
 */
export function EngineSettings({client}: {client: AppCoreClient}) {
    const [status, setStatus] = useState<EngineStatus | null>(null);
    const [build, setBuild] = useState<EngineBuildProgress | null>(null);
    const [problem, setProblem] = useState<string | null>(null);

    const refresh = useCallback(async () => {
        const current = await client.call("engine.status", {});
        setStatus(current);
        setBuild((shown) => shown ?? current.build);
    }, [client]);
    useEffect(() => {
        refresh().catch((failure: unknown) => setProblem(describeError(failure).detail));
    }, [refresh]);
    useCoreEvent(client, "engine.buildProgress", (progress) => {
        setBuild(progress);
        if (progress.state !== "running")
            void refresh().catch(() => undefined);
    });

    const act = (work: () => Promise<unknown>) => {
        setProblem(null);
        work().catch((failure: unknown) => setProblem(describeError(failure).detail));
    };

    if (status == null)
        return problem == null ? null : <fieldset><legend>Engine</legend><p className="warning-text">{problem}</p></fieldset>;
    const running = build?.state === "running";
    const missing = status.tools.filter((tool) => tool.path == null);
    return (
        <fieldset aria-label="Engine">
            <legend>Engine</legend>
            <p className="small">
                In use: <span className="mono">{status.inUse.description}</span>
                {status.inUse.kind === "prebuilt" ? " (node-llama-cpp's prebuilt binary)" : " (built on this machine for this CPU)"}
                {status.inUse.compiler != null && <><br /><span className="muted">Compiler: {status.inUse.compiler}</span></>}
            </p>
            {status.inUse.kind === "prebuilt" && status.nextStart === "local" && !running && (
                <p className="notice" role="status">Built for this CPU. Cleanroom uses it from its next start: restart the app.</p>
            )}
            {status.inUse.kind === "prebuilt" && status.nextStart === "prebuilt" && !running && status.canBuild && (
                <button type="button" className="button" onClick={() => act(async () => {
                    setBuild({state: "running", phase: "checking", percent: null, error: null});
                    await client.call("engine.build", {});
                })}>Build for this CPU (about 10 minutes)</button>
            )}
            {status.inUse.kind === "prebuilt" && status.localBuild == null && !status.canBuild && missing.length > 0 && (
                <p className="small muted">A build for this CPU needs {missing.map((tool) => `${tool.tool} (Debian package ${tool.debianPackage})`).join(", ")}.</p>
            )}
            {running && build != null && <EngineBuildBar build={build} onCancel={() => act(() => client.call("engine.cancelBuild", {}))} />}
            {build?.state === "failed" && build.error != null && <p className="warning-text" role="alert">{build.error.message}</p>}
            {build?.state === "cancelled" && <p className="small muted" role="status">Build cancelled: nothing was kept, the prebuilt engine stays in use.</p>}
            {problem != null && <p className="warning-text" role="alert">{problem}</p>}
        </fieldset>
    );
}

function EngineBuildBar({build, onCancel}: {build: EngineBuildProgress, onCancel: () => void}) {
    const percent = build.percent ?? 0;
    const words = build.phase === "compiling" ? `${phaseWords.compiling} ${percent}%` : phaseWords[build.phase];
    return (
        <div className="download">
            <div className="progress" role="progressbar" aria-label="Engine build progress" aria-valuemin={0} aria-valuemax={100}
                aria-valuenow={percent} aria-valuetext={words}>
                <div className="progress-fill" style={{width: `${percent}%`}} />
            </div>
            <div className="download-line">
                <span className="small">{words}</span>
                <button type="button" className="button button-small" onClick={onCancel}>Cancel</button>
            </div>
        </div>
    );
}
