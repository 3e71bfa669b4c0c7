import {useCallback, useEffect, useRef, useState} from "react";
import {isCleanroomError} from "../../src/core/common/errors.js";
import {defaultConversationTitle, titleFromText} from "../../src/core/common/titleFromText.js";
import type {ConversationPolicy, RouteRequest} from "../../src/core/common/types.js";
import {cloudAccessOf} from "./cloudAccess.js";
import {BannerStack} from "./components/BannerStack.js";
import {ChatView} from "./components/ChatView.js";
import {FirstRunScreen} from "./components/FirstRunScreen.js";
import {IsolationPanel, type PreviousSession} from "./components/IsolationPanel.js";
import {ModelsView} from "./components/models/ModelsView.js";
import {SettingsDialog} from "./components/SettingsDialog.js";
import {Sidebar} from "./components/Sidebar.js";
import {useBanners} from "./hooks/useBanners.js";
import {useConversationList} from "./hooks/useConversationList.js";
import {useConversationSearch} from "./hooks/useConversationSearch.js";
import {useCoreEvent} from "./hooks/useCoreEvent.js";
import {useIsolationReport} from "./hooks/useIsolationReport.js";
import {useModelAndSettings} from "./hooks/useModelAndSettings.js";
import {useOpenConversation} from "./hooks/useOpenConversation.js";
import type {AppCoreClient} from "./transport/AppCoreClient.js";

const defaultTitle = defaultConversationTitle;
const purgeBannerId = "deletion-purge";
const deletionPendingNotice = {
    kind: "warning" as const,
    title: "Deleted, but its text is not yet purged from disk",
    detail: "Another program is reading the database (a backup, a sync tool, the command line), so the deleted text stays in the " +
        "database file until it is done. Cleanroom finishes the purge as soon as it lets go."
};
const deletionPurgedNotice = {
    kind: "info" as const,
    title: "Purge finished",
    detail: "The deleted conversation's text is now gone from the database file and its journal."
};
/** Titles from a first message fit the sidebar: 48 characters as the user sees them. */
const sidebarTitleGraphemes = 48;

/**
 * The app: sidebar, chat and Isolation panel once a model is loaded, the first-run screen
 * before. Switching conversation ends the previous one's session, and the panel shows its scrub.
 */
export function App({client}: {client: AppCoreClient}) {
    const {banners, show, showError, dismiss} = useBanners();
    const models = useModelAndSettings(client, showError);
    const list = useConversationList(client, showError);
    const [searchQuery, setSearchQuery] = useState("");
    const searchHits = useConversationSearch(client, searchQuery, showError);
    const [openId, setOpenId] = useState<string | null>(null);
    const chat = useOpenConversation(client, openId, showError);
    const isolation = useIsolationReport(client, openId);
    const [previous, setPrevious] = useState<PreviousSession | null>(null);
    const [settingsOpen, setSettingsOpen] = useState(false);
    const [modelsOpen, setModelsOpen] = useState(false);
    const openedFirst = useRef(false);
    const purgePending = useRef(false);

    useEffect(() => {
        if (!openedFirst.current && list.loaded) {
            openedFirst.current = true;
            if (list.conversations[0] != null)
                setOpenId(list.conversations[0].id);
        }
    }, [list.loaded, list.conversations]);

    useCoreEvent(client, "core.status", (status) => {
        if (status.state === "disconnected")
            show({id: "connection", kind: "error", title: "Disconnected from the core", detail: status.message ?? "Reconnecting…"});
        else if (status.state === "restarted") {
            dismiss("connection");
            show({id: "connection-restored", kind: "info", title: "The core restarted", detail: status.message ?? "Sessions were scrubbed and start fresh from the stored history."});
            void list.refresh();
            void chat.refresh();
            void isolation.refresh();
        }
    });
    useEffect(() => {
        if (models.model?.state === "error" && models.model.error != null)
            show({id: "model", kind: "error", title: "The model could not be loaded", detail: models.model.error.message});
        else if (models.model?.state === "ready")
            dismiss("model");
    }, [models.model, show, dismiss]);
    useEffect(() => {
        if (models.settings?.cloud.keyStorage === "basic_text" && models.settings.cloud.keyStorageWarning != null)
            show({id: "key-storage", kind: "warning", title: "The cloud key is stored without OS encryption", detail: models.settings.cloud.keyStorageWarning});
    }, [models.settings, show]);

    const switchTo = useCallback(async (id: string | null) => {
        const previousId = openId;
        if (previousId === id)
            return;
        setOpenId(id);
        setPrevious(null);
        if (previousId == null || chat.generating || !list.conversations.some((conversation) => conversation.id === previousId))
            return;
        const title = list.conversations.find((conversation) => conversation.id === previousId)?.title ?? "Previous conversation";
        const showLastScrub = async () => {
            const {lastScrub} = await client.call("isolation.report", {conversationId: previousId});
            if (lastScrub != null)
                setPrevious({title, scrub: lastScrub, at: lastScrub.at});
        };
        try {
            const {scrub} = await client.call("conversations.close", {conversationId: previousId});
            if (scrub != null)
                setPrevious({title, scrub, at: Date.now()});
            else
                await showLastScrub(); // its session had already ended (a stopped turn is scrubbed at once): show that scrub
        } catch (error) {
            showError(error);
            // A scrub that could not be verified: the card shows that (failed) scrub too.
            if (isCleanroomError(error, "SCRUB_UNVERIFIED"))
                await showLastScrub().catch(showError);
        }
    }, [openId, chat.generating, list.conversations, client, showError]);

    const createConversation = useCallback(async () => {
        try {
            const conversation = await list.create();
            await switchTo(conversation.id);
        } catch (error) {
            showError(error);
        }
    }, [list, switchTo, showError]);

    const send = useCallback(async (text: string, route: RouteRequest) => {
        const untitled = chat.conversation != null && chat.messages.length === 0 && chat.conversation.title === defaultTitle;
        const sent = await chat.send(text, route);
        if (sent && untitled && openId != null)
            await list.rename(openId, titleFromText(text, {maxGraphemes: sidebarTitleGraphemes})).then(() => chat.refresh()).catch(showError);
        return sent;
    }, [chat, list, openId, showError]);

    const setPolicy = useCallback((policy: ConversationPolicy) => {
        if (openId != null)
            void list.setPolicy(openId, policy).then(() => chat.refresh()).catch(showError);
    }, [list, chat, openId, showError]);

    const deleteConversation = useCallback(async (id: string) => {
        try {
            const {purge} = await list.remove(id);
            if (id === openId)
                setOpenId(null);
            if (purge === "pending") {
                purgePending.current = true;
                show({id: purgeBannerId, ...deletionPendingNotice});
            }
        } catch (error) {
            showError(error);
        }
    }, [list, openId, show, showError]);

    useCoreEvent(client, "audit.event", (event) => {
        // A scrub that could not be verified, also of a session that ended on its own (idle, evicted):
        // the same banner as the error a call gets for it (one banner per message).
        if (event.kind === "security.fault" && isCleanroomError(event.data.error)) {
            showError(event.data.error);
            return;
        }
        // The core finishes a pending purge once the other reader is done, and records it.
        if (event.kind !== "deletion.purged" || !purgePending.current)
            return;
        purgePending.current = false;
        show({id: purgeBannerId, ...deletionPurgedNotice});
    });

    if (models.model == null)
        return <div className="splash" role="status">{client.connection === "disconnected" ? "Connecting to the core…" : "Starting…"}<BannerStack banners={banners} onDismiss={dismiss} /></div>;

    const modelReady = models.model.state === "ready";
    const settingsDialog = settingsOpen && models.settings != null && (
        <SettingsDialog settings={models.settings} model={models.model} pendingRestart={models.pendingRestart}
            conversation={chat.conversation} onClose={() => setSettingsOpen(false)}
            onSave={(changes) => models.save(changes).catch(showError)}
            onLoadModel={(path) => models.loadModel(path).catch(showError)}
            onSetPolicy={setPolicy} onOpenModels={() => {
                setSettingsOpen(false);
                setModelsOpen(true);
            }} />
    );

    if (modelsOpen)
        return (
            <div className="app-models">
                <ModelsView client={client} banners={<BannerStack banners={banners} onDismiss={dismiss} />} onError={showError}
                    onBack={() => setModelsOpen(false)} onModelReady={() => {
                        // The default model is loaded: the chat opens (the first-run screen gives way to it).
                        setModelsOpen(false);
                        void models.refresh();
                    }} />
            </div>
        );

    if (models.model.state !== "ready" && !(models.model.state === "loading" && list.conversations.length > 0))
        return (
            <div className="app-first-run">
                <BannerStack banners={banners.filter((banner) => banner.id !== "model")} onDismiss={dismiss} />
                {models.model.state === "loading"
                    ? <main className="first-run" aria-label="Loading"><div className="first-run-card"><h1>Loading the model…</h1><p className="muted">{models.model.path}</p><p className="muted">The first load measures the fastest thread count for this machine.</p></div></main>
                    : <FirstRunScreen model={models.model} onLoadModel={(path) => models.loadModel(path).catch(showError)}
                        onOpenModels={() => setModelsOpen(true)} />}
            </div>
        );

    return (
        <div className="app">
            <Sidebar conversations={list.conversations} openId={openId} query={searchQuery} onQueryChange={setSearchQuery} hits={searchHits}
                onNew={() => void createConversation()}
                onOpen={(id) => void switchTo(id)} onRename={(id, title) => void list.rename(id, title).then(() => chat.refresh()).catch(showError)}
                onDelete={(id) => void deleteConversation(id)} onOpenSettings={() => setSettingsOpen(true)} />
            <div className="center">
                <BannerStack banners={banners} onDismiss={dismiss} />
                <ChatView conversation={chat.conversation} messages={chat.messages} generating={chat.generating} modelReady={modelReady}
                    cloud={cloudAccessOf(models.settings)} onSend={send} onStop={() => void chat.stop()}
                    onRegenerate={(route) => void chat.regenerate(route)} onSetPolicy={setPolicy} />
            </div>
            <IsolationPanel report={isolation.report} previous={previous} model={models.model.info} />
            {settingsDialog}
        </div>
    );
}
