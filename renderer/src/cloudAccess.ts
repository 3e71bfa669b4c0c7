import type {AppSettings} from "../../src/core/common/api/index.js";
import type {ConversationPolicy} from "../../src/core/common/types.js";

/** Whether the app may reach the cloud at all: the global switch on and an endpoint and model set. */
export type CloudAccess = {fallback: boolean, configured: boolean};

export function cloudAccessOf(settings: AppSettings | null): CloudAccess {
    return {
        fallback: settings?.cloud.fallback ?? false,
        configured: settings?.cloud.endpoint != null && settings.cloud.model != null
    };
}

/** Whether a turn of a conversation with this policy may be sent to the cloud. */
export function cloudUsable(policy: ConversationPolicy, access: CloudAccess) {
    return policy === "cloud-allowed" && access.fallback && access.configured;
}

/** One line on what the policy means right now. */
export function policyHint(policy: ConversationPolicy, access: CloudAccess): string {
    if (policy === "local")
        return "Nothing leaves this machine.";
    if (!access.fallback)
        return "Cloud fallback is off in Settings: replies stay local.";
    if (!access.configured)
        return "No cloud endpoint and model are set in Settings: replies stay local.";
    return "Turns too large for the local model go to the cloud, canary-checked.";
}
