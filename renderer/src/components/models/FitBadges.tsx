import type {ModelFit} from "../../../../src/core/common/models.js";
import {formatBytes, formatCount} from "../../format.js";

/** "Fits this machine" or "Too large" for RAM, and the same for VRAM when there is a GPU. */
export function FitBadges({fit}: {fit: ModelFit}) {
    return (
        <span className="fit-badges">
            <span className={`badge ${fit.fitsRam ? "badge-ok" : "badge-danger"}`}
                title={`Needs ${formatBytes(fit.ramNeededBytes)} of RAM; ${formatBytes(fit.ramBudgetBytes)} usable on this machine`}>
                {fit.fitsRam ? "Fits this machine" : "Too large"}
            </span>
            {fit.fitsRam && !fit.fitsFreeRamNow && <span className="badge badge-warning" title="Close other apps to free memory">Memory busy now</span>}
            {fit.gpu != null && (
                <span className={`badge ${fit.gpu.fitsVram ? "badge-ok" : "badge-muted"}`}>
                    {fit.gpu.fitsVram ? "Fits the GPU" : "Too large for the GPU"}
                </span>
            )}
        </span>
    );
}

/** Largest context and memory needed, as short facts. */
export function fitFacts(fit: ModelFit): Array<[string, string]> {
    const facts: Array<[string, string]> = [
        ["Largest context", fit.maxContextSize > 0 ? `${formatCount(fit.maxContextSize)} tokens` : "none fits"],
        ["RAM needed", `${formatBytes(fit.ramNeededBytes)} of ${formatBytes(fit.ramBudgetBytes)}`]
    ];
    if (fit.gpu != null)
        facts.push(["VRAM", fit.gpu.fitsVram
            ? `${formatBytes(fit.gpu.vramNeededBytes)} of ${formatBytes(fit.gpu.vramFreeBytes)} free · up to ${formatCount(fit.gpu.maxContextSize)} tokens`
            : `${formatBytes(fit.gpu.vramNeededBytes)} needed, ${formatBytes(fit.gpu.vramFreeBytes)} free`]);
    return facts;
}
