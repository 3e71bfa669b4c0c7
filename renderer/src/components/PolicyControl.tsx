import type {KeyboardEvent} from "react";
import type {ConversationPolicy} from "../../../src/core/common/types.js";
import {policyHint, type CloudAccess} from "../cloudAccess.js";

const options: Array<{policy: ConversationPolicy, label: string}> = [
    {policy: "local", label: "Local only"},
    {policy: "cloud-allowed", label: "Cloud allowed"}
];

/** The open conversation's policy as a two-way choice in the chat header, with what it means right now. */
export function PolicyControl({policy, cloud, onChange}: {policy: ConversationPolicy, cloud: CloudAccess, onChange: (policy: ConversationPolicy) => void}) {
    const onKeyDown = (event: KeyboardEvent) => {
        if (event.key === "ArrowLeft" || event.key === "ArrowRight" || event.key === "ArrowUp" || event.key === "ArrowDown") {
            event.preventDefault();
            onChange(policy === "local" ? "cloud-allowed" : "local");
        }
    };

    return (
        <div className="policy-control">
            <div className="segmented" role="radiogroup" aria-label="Conversation policy" onKeyDown={onKeyDown}>
                {options.map((option) => (
                    <button key={option.policy} type="button" role="radio" aria-checked={policy === option.policy}
                        tabIndex={policy === option.policy ? 0 : -1}
                        className={`segment segment-${option.policy}`} onClick={() => onChange(option.policy)}>
                        {option.label}
                    </button>
                ))}
            </div>
            <span className="policy-hint">{policyHint(policy, cloud)}</span>
        </div>
    );
}
