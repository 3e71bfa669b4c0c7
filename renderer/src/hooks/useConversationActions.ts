import {useCallback, type Dispatch} from "react";
import {defaultConversationTitle, titleFromText} from "../../../src/core/common/titleFromText.js";
import type {ConversationPolicy, RouteRequest} from "../../../src/core/common/types.js";
import {downloadText} from "../downloadText.js";
import type {NavigationAction} from "../navigation.js";
import type {AppCoreClient} from "../transport/AppCoreClient.js";
import type {UploadedAttachment} from "../uploadAttachment.js";
import type {Banner} from "./useBanners.js";
import type {useConversationList} from "./useConversationList.js";
import type {useOpenConversation} from "./useOpenConversation.js";

/** Titles from a first message fit the sidebar: 48 characters as the user sees them. */
const sidebarTitleGraphemes = 48;

type ActionSources = {
    client: AppCoreClient,
    openId: string | null,
    list: ReturnType<typeof useConversationList>,
    chat: ReturnType<typeof useOpenConversation>,
    dispatch: Dispatch<NavigationAction>,
    switchTo: (id: string | null) => Promise<void>,
    show: (banner: Banner) => void,
    showError: (error: unknown) => void
};

/** What the user does to conversations from the sidebar, the chat and the menus (deletion aside: `useUndoableDelete`). */
export function useConversationActions({client, openId, list, chat, dispatch, switchTo, show, showError}: ActionSources) {
    /** A new conversation; an untouched new one already there is reused rather than piling up empty ones. */
    const createConversation = useCallback(async () => {
        dispatch({type: "drawerClosed"});
        try {
            const typing = (document.querySelector<HTMLTextAreaElement>("textarea[aria-label='Message']")?.value ?? "") !== "";
            const unused = list.conversations.find((conversation) => conversation.messageCount === 0 && conversation.title === defaultConversationTitle &&
                !conversation.incognito && !conversation.pinned && !conversation.hasDraft && !(conversation.id === openId && typing));
            await switchTo(unused?.id ?? (await list.create()).id);
            focusComposer();
        } catch (error) {
            showError(error);
        }
    }, [list, openId, switchTo, dispatch, showError]);

    /** A new incognito conversation: held in the core's memory only (never reused from an untouched one: that one is stored). */
    const createIncognitoConversation = useCallback(async () => {
        dispatch({type: "drawerClosed"});
        try {
            await switchTo((await list.create({incognito: true})).id);
            focusComposer();
        } catch (error) {
            showError(error);
        }
    }, [list, switchTo, dispatch, showError]);

    /** Sends; the first message of an untitled conversation gives it its title. */
    const send = useCallback(async (text: string, route: RouteRequest, attachments: UploadedAttachment[]) => {
        const untitled = chat.conversation != null && chat.messages.length === 0 && chat.conversation.title === defaultConversationTitle;
        const sent = await chat.send(text, route, attachments);
        if (sent && untitled && openId != null)
            await list.rename(openId, titleFromText(text, {maxGraphemes: sidebarTitleGraphemes})).catch(showError);
        return sent;
    }, [chat, list, openId, showError]);

    const setPolicy = useCallback((policy: ConversationPolicy) => {
        if (openId != null)
            void list.setPolicy(openId, policy).catch(showError);
    }, [list, openId, showError]);

    const exportConversations = useCallback(async (conversationId: string | undefined, format: "markdown" | "json") => {
        try {
            const file = await client.call("conversations.export", {conversationId, format});
            downloadText(file.fileName, file.mimeType, file.text);
        } catch (error) {
            showError(error);
        }
    }, [client, showError]);

    const importConversations = useCallback(async (text: string) => {
        try {
            const {imported} = await client.call("conversations.import", {text});
            await list.refresh();
            show({id: "import", kind: "info", title: `Imported ${imported.length === 1 ? "1 conversation" : `${imported.length} conversations`}`,
                detail: "Each is a new conversation with its own context; the file's messages are its history."});
            if (imported[0] != null)
                await switchTo(imported[0].id);
        } catch (error) {
            showError(error);
        }
    }, [client, list, show, showError, switchTo]);

    return {createConversation, createIncognitoConversation, send, setPolicy, exportConversations, importConversations};
}

/** Puts the cursor in the message box (once the conversation's composer is there). */
function focusComposer() {
    requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>("textarea[aria-label='Message']")?.focus());
}
