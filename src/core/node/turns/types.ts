import type {CloudSecretsOptions} from "../../common/secretScan/types.js";
import type {Conversation, ConversationId, RouteRequest} from "../../common/types.js";
import type {DocumentSource, ExtractedDocument} from "../documents/extraction/types.js";
import type {UserTurnSampling} from "../engine/TurnSampling.js";

export type SendMessageInput = UserTurnSampling & {
    conversationId: ConversationId,
    text: string,
    /** `auto` (the default): local, unless the local engine cannot serve the turn and the cloud is allowed. */
    route?: RouteRequest,
    /** A cloud turn's choice for secrets found in what it would send (redact, or allow kinds). Local turns are never scanned. */
    secrets?: CloudSecretsOptions,
    /** Documents this turn brings (#23), read (`extractDocument`) before anything is stored or evaluated. */
    attachments?: DocumentSource[],
    /** Documents already read, sent before `attachments`: those of a prompt asked again (`chat.regenerate`). */
    readAttachments?: ExtractedDocument[],
    /** A cloud turn may send the conversation's documents; without it, a cloud turn that would is refused, naming them. */
    sendAttachments?: boolean
};

export type SendMessageCallbacks = {
    signal?: AbortSignal,
    onText?: (text: string) => void,
    /** Called once the user message and the (still empty) reply are stored. */
    onStarted?: (ids: {userMessageId: number, assistantMessageId: number}) => void,
    /** Local turns: called after each prefill step with the prompt tokens in the context and the prompt's length. */
    onPrefill?: (tokensInContext: number, promptTokens: number) => void,
    /** Local turns: keep the first generated token's probabilities (the self-test's differential check). */
    captureFirstTokenProbabilities?: boolean
};

/** One turn as the turn services take it: the conversation, its usable history, and what was asked. */
export type TurnRequest = UserTurnSampling & {
    conversation: Conversation,
    /** Earlier turns the model may see, oldest first: complete replies, and interrupted ones with text. */
    history: Array<{role: "user" | "assistant", content: string}>,
    text: string,
    /** For a cloud turn: redact the secrets found, or let some kinds through (`screenCloudRequest`). */
    secrets?: CloudSecretsOptions,
    /** Documents this turn brings, extracted. */
    attachments?: ExtractedDocument[]
};
