/**
 * Where the renderer's cache keeps what the core knows. One key per conversation (its messages) and
 * per conversation's isolation report: an answer always lands under the conversation it was asked
 * for, so a slow answer for a conversation no longer shown never replaces the one that is.
 */
export const queryKeys = {
    /** The sidebar's list (`conversations.list`). */
    conversations: ["conversations"] as const,
    /** One conversation with its messages, draft and whether a reply streams (`conversations.get`). */
    conversation: (conversationId: string) => ["conversation", conversationId] as const,
    /** One conversation's isolation report (`isolation.report`). */
    isolation: (conversationId: string) => ["isolation", conversationId] as const,
    /** The model's status (`model.status`, then `core.status` events). */
    model: ["model"] as const,
    /** The app settings (`settings.get`). */
    settings: ["settings"] as const,
    /** The models folder and the catalog (`models.list`). */
    modelLibrary: ["models", "library"] as const,
    /** Other apps' models found on this machine (`models.detect`). */
    detectedModels: ["models", "detected"] as const
};
