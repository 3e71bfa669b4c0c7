import type {ModelLoadStep, ModelStatus} from "../../../src/core/common/api/index.js";

const steps: ReadonlyArray<{step: ModelLoadStep, label: string}> = [
    {step: "reading", label: "Checking the model file"},
    {step: "loading", label: "Loading the model into memory"},
    {step: "deviceCheck", label: "Checking the GPU keeps conversations apart (first load on a device only)"},
    {step: "threads", label: "Measuring the fastest thread count (first load on this machine only)"},
    {step: "kvLayout", label: "Learning the memory layout the scrub zeroes"}
];

/** A model load's steps, the running one marked: what the user waits for, by name. */
export function LoadProgress({model}: {model: ModelStatus}) {
    const current = steps.findIndex((entry) => entry.step === model.step);
    return (
        <div className="load-progress">
            <progress className="meter" aria-label="Loading the model" />
            <ol className="load-steps" aria-label="Loading steps">
                {steps.map((entry, index) => (
                    <li key={entry.step} data-load-step={entry.step} aria-current={index === current ? "step" : undefined}
                        className={index < current ? "done" : index === current ? "current" : "pending"}>
                        {index < current ? "✓ " : index === current ? "… " : ""}{entry.label}
                    </li>
                ))}
            </ol>
        </div>
    );
}
