import {CleanroomError} from "../../common/errors.js";
import type {ConversationPolicy, Route, RouteRequest} from "../../common/types.js";

export type {RouteRequest};

export type RouteFacts = {
    policy: ConversationPolicy,
    /** The global cloud-fallback switch. */
    cloudFallback: boolean,
    /** An endpoint and a model are set. */
    cloudConfigured: boolean,
    requested: RouteRequest,
    /** Why the local engine cannot serve this turn, or null when it can. */
    localProblem: CleanroomError | null
};

export type RouteDecision = {route: Route, reason: string};

/**
 * Where a turn goes. A `local` conversation never goes to the network, whatever else is set;
 * the cloud is used only with the conversation's permission and the global switch both on,
 * when the user asks for it or the local engine cannot serve the turn.
 */
export function chooseRoute({policy, cloudFallback, cloudConfigured, requested, localProblem}: RouteFacts): RouteDecision {
    const cloudUsable = policy === "cloud-allowed" && cloudFallback && cloudConfigured;

    if (requested === "cloud") {
        if (policy !== "cloud-allowed")
            throw new CleanroomError("CLOUD_DISABLED", "This conversation is local only: its turns never go to the cloud.", {policy});
        if (!cloudFallback)
            throw new CleanroomError("CLOUD_DISABLED", "Cloud fallback is switched off in the settings.", {policy});
        if (!cloudConfigured)
            throw new CleanroomError("CLOUD_DISABLED", "No cloud endpoint and model are set.", {policy});
        return {route: "cloud", reason: "the user asked for the cloud"};
    }

    if (localProblem == null)
        return {route: "local", reason: "the local engine serves this turn"};

    if (requested === "auto" && cloudUsable) {
        const reason = localProblem.code === "MODEL_NOT_LOADED"
            ? "no local model is loaded"
            : localProblem.code === "CONTEXT_OVERFLOW"
                ? `the turn does not fit the local context (${localProblem.details.overBy} tokens over)`
                : `the local engine cannot serve it (${localProblem.code})`;
        return {route: "cloud", reason};
    }
    throw localProblem;
}
