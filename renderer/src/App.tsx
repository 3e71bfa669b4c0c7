import {useCallback, useEffect, useRef, useState, type ReactNode} from "react";
import {isCleanroomError} from "../../src/core/common/errors.js";
import {defaultConversationTitle, titleFromText} from "../../src/core/common/titleFromText.js";
import type {ConversationPolicy, RouteRequest} from "../../src/core/common/types.js";
import {cloudAccessOf} from "./cloudAccess.js";
import {BannerStack} from "./components/BannerStack.js";
import {ChatView} from "./components/ChatView.js";
import {ExportMenu} from "./components/ExportMenu.js";
import {FirstRunScreen} from "./components/FirstRunScreen.js";
import {HelpSheet} from "./components/HelpSheet.js";
import {LoadProgress} from "./components/LoadProgress.js";
import {IsolationPanel, type PreviousSession} from "./components/IsolationPanel.js";
import {IsolationApiSessions} from "./components/IsolationApiSessions.js";
import {ModelsView} from "./components/models/ModelsView.js";
import {localAnswerUnavailable, SecretsFoundDialog} from "./components/SecretsFoundDialog.js";
import {CloudDocumentsDialog} from "./components/CloudDocumentsDialog.js";
import {useCloudDocumentsReview} from "./hooks/useCloudDocumentsReview.js";
import {uploadAttachment, type UploadedAttachment} from "./uploadAttachment.js";
import {openCitation} from "./openCitation.js";
import {SettingsDialog} from "./components/SettingsDialog.js";
import {Sidebar} from "./components/Sidebar.js";
import {useBanners} from "./hooks/useBanners.js";
import {useConversationList} from "./hooks/useConversationList.js";
import {useCoreEvent} from "./hooks/useCoreEvent.js";
import {useIsolationReport} from "./hooks/useIsolationReport.js";
import {useMediaQuery} from "./hooks/useMediaQuery.js";
import {useModelAndSettings} from "./hooks/useModelAndSettings.js";
import {useOpenConversation} from "./hooks/useOpenConversation.js";
import {useSecretReview} from "./hooks/useSecretReview.js";
import type {AppCoreClient} from "./transport/AppCoreClient.js";
import {downloadText} from "./downloadText.js";
import {mostRecentlyActive} from "../../src/core/common/conversationOrder.js";

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
/** How long a deletion can be undone before the conversation is deleted (scrubbed at once, deleted then). */
const undoDeleteMs = 6000;
/** Below this width the sidebar and the Isolation panel are drawers behind toggles. */
const narrowQuery = "(max-width: 899.98px)";

type PendingDeletion = {id: string, title: string, timer: ReturnType<typeof setTimeout>};

/**
 * The app: sidebar, chat and Isolation panel once a model is loaded, the first-run screen
 * before. Switching conversation ends the previous one's session, and the panel shows its scrub.
 */
export function App({client}: {client: AppCoreClient}) {
    const {banners, show, showError, dismiss} = useBanners();
    const models = useModelAndSettings(client, showError);
    const list = useConversationList(client, showError);
    const [openId, setOpenId] = useState<string | null>(null);
    const secretReview = useSecretReview();
    const cloudDocumentsReview = useCloudDocumentsReview();
    const chat = useOpenConversation(client, openId, showError, secretReview.review, cloudDocumentsReview.review);
    const upload = useCallback((file: File) => uploadAttachment(client, file), [client]);
    const discardUpload = useCallback((uploadId: string) => void client.call("attachments.discard", {uploadId}).catch(() => undefined), [client]);
    const isolation = useIsolationReport(client, openId);
    const [previous, setPrevious] = useState<PreviousSession | null>(null);
    const [settingsOpen, setSettingsOpen] = useState(false);
    const [modelsOpen, setModelsOpen] = useState(false);
    const [helpOpen, setHelpOpen] = useState(false);
    const [drawer, setDrawer] = useState<"sidebar" | "isolation" | null>(null);
    const [pendingDeletion, setPendingDeletion] = useState<PendingDeletion | null>(null);
    const narrow = useMediaQuery(narrowQuery);
    const searchInput = useRef<HTMLInputElement>(null);
    const openedFirst = useRef(false);
    const purgePending = useRef(false);
    const modelReady = models.model?.state === "ready";

    // The app opens where people expect: the conversation used last, or (none yet) a new one, its composer focused.
    useEffect(() => {
        if (openedFirst.current || !list.loaded || models.model == null)
            return;
        const latest = mostRecentlyActive(list.conversations);
        if (latest != null) {
            openedFirst.current = true;
            setOpenId(latest.id);
        } else if (modelReady) {
            openedFirst.current = true;
            void list.openMostRecentOrCreate().then((conversation) => setOpenId(conversation.id)).catch(showError);
        }
    }, [list, models.model, modelReady, showError]);
    useEffect(() => {
        if (!narrow)
            setDrawer(null);
    }, [narrow]);

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

    /** A new conversation; an untouched new one already there is reused rather than piling up empty ones. */
    const createConversation = useCallback(async () => {
        setDrawer(null);
        try {
            const typing = (document.querySelector<HTMLTextAreaElement>("textarea[aria-label='Message']")?.value ?? "") !== "";
            const unused = list.conversations.find((conversation) => conversation.messageCount === 0 && conversation.title === defaultTitle && !conversation.incognito &&
                !conversation.pinned && !conversation.hasDraft && !(conversation.id === openId && typing));
            await switchTo(unused?.id ?? (await list.create()).id);
            focusComposer();
        } catch (error) {
            showError(error);
        }
    }, [list, openId, switchTo, showError]);

    /** A new incognito conversation: held in the core's memory only (never reused from an untouched one: that one is stored). */
    const createIncognitoConversation = useCallback(async () => {
        setDrawer(null);
        try {
            await switchTo((await list.create({incognito: true})).id);
            focusComposer();
        } catch (error) {
            showError(error);
        }
    }, [list, switchTo, showError]);

    const send = useCallback(async (text: string, route: RouteRequest, attachments: UploadedAttachment[]) => {
        const untitled = chat.conversation != null && chat.messages.length === 0 && chat.conversation.title === defaultTitle;
        const sent = await chat.send(text, route, attachments);
        if (sent && untitled && openId != null)
            await list.rename(openId, titleFromText(text, {maxGraphemes: sidebarTitleGraphemes})).then(() => chat.refresh()).catch(showError);
        return sent;
    }, [chat, list, openId, showError]);

    const setPolicy = useCallback((policy: ConversationPolicy) => {
        if (openId != null)
            void list.setPolicy(openId, policy).then(() => chat.refresh()).catch(showError);
    }, [list, chat, openId, showError]);

    /** The deletion itself, once its Undo ran out (or another deletion came): the conversation, its messages and trail. */
    const finishDeletion = useCallback(async (id: string) => {
        setPendingDeletion((current) => {
            if (current?.id === id)
                clearTimeout(current.timer);
            return current?.id === id ? null : current;
        });
        try {
            const {purge} = await list.remove(id);
            if (purge === "pending") {
                purgePending.current = true;
                show({id: purgeBannerId, ...deletionPendingNotice});
            }
        } catch (error) {
            showError(error);
        }
    }, [list, show, showError]);

    /** Delete with Undo: the session is scrubbed and the conversation leaves the list at once; it is deleted when Undo runs out. */
    const deleteConversation = useCallback(async (id: string) => {
        const title = list.conversations.find((conversation) => conversation.id === id)?.title ?? "Conversation";
        if (pendingDeletion != null)
            void finishDeletion(pendingDeletion.id);
        try {
            await list.trash(id);
        } catch (error) {
            showError(error);
            return;
        }
        if (id === openId) {
            setPrevious(null);
            setOpenId(mostRecentlyActive(list.conversations.filter((conversation) => conversation.id !== id))?.id ?? null);
        }
        setPendingDeletion({id, title, timer: setTimeout(() => void finishDeletion(id), undoDeleteMs)});
    }, [list, openId, pendingDeletion, finishDeletion, showError]);

    const undoDeletion = useCallback(async () => {
        if (pendingDeletion == null)
            return;
        clearTimeout(pendingDeletion.timer);
        setPendingDeletion(null);
        try {
            await list.restore(pendingDeletion.id);
            setPrevious(null);
            setOpenId(pendingDeletion.id);
        } catch (error) {
            showError(error);
        }
    }, [list, pendingDeletion, showError]);

    // Nothing open (the open one was deleted, the last one gone): a ready new conversation takes its place.
    useEffect(() => {
        if (openedFirst.current && openId == null && list.loaded && modelReady && list.conversations.length === 0)
            void list.openMostRecentOrCreate().then((conversation) => setOpenId(conversation.id)).catch(showError);
        else if (openedFirst.current && openId == null && list.conversations.length > 0)
            setOpenId(mostRecentlyActive(list.conversations)!.id);
    }, [openId, list, modelReady, showError]);

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

    // Shortcuts: Ctrl+N (Alt+N where the browser keeps Ctrl+N) new, with Shift incognito, Ctrl+K search, Ctrl+, settings, Ctrl+/ or ? this list, Esc closes a drawer.
    useEffect(() => {
        const onKey = (event: KeyboardEvent) => {
            // A modal dialog (Settings, this list, Secrets found) takes the keyboard until it is closed: it handles its own Escape.
            if (document.querySelector("[role=dialog][aria-modal=true]") != null)
                return;
            const control = event.ctrlKey || event.metaKey;
            const typing = event.target instanceof HTMLElement && (event.target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName));
            const key = event.key.toLowerCase();
            if (((control && !event.altKey) || (event.altKey && !control)) && key === "n") {
                event.preventDefault();
                void (event.shiftKey ? createIncognitoConversation() : createConversation());
            } else if (control && key === "k") {
                event.preventDefault();
                if (narrow)
                    setDrawer("sidebar");
                setTimeout(() => searchInput.current?.focus(), 0);
            } else if (control && key === ",") {
                event.preventDefault();
                setSettingsOpen(true);
            } else if ((control && key === "/") || (key === "?" && !typing)) {
                event.preventDefault();
                setHelpOpen(true);
            } else if (key === "escape" && drawer != null) {
                setDrawer(null);
            }
        };
        window.addEventListener("keydown", onKey);
        return () => window.removeEventListener("keydown", onKey);
    }, [createConversation, createIncognitoConversation, narrow, drawer]);

    // A session that ended on its own (idle, evicted, model switched) and could not be verified scrubbed:
    // the same banner as the error a call gets for it (one banner per message).
    useCoreEvent(client, "scrub.backgroundFault", (fault) => showError(fault.error));
    useCoreEvent(client, "audit.event", (event) => {
        // The core finishes a pending purge once the other reader is done, and records it.
        if (event.kind !== "deletion.purged" || !purgePending.current)
            return;
        purgePending.current = false;
        show({id: purgeBannerId, ...deletionPurgedNotice});
    });

    if (models.model == null)
        return <div className="splash" role="status">{client.connection === "disconnected" ? "Connecting to the core…" : "Starting…"}<BannerStack banners={banners} onDismiss={dismiss} /></div>;

    /** "Delete everything" in Settings: the core wipes the store; the list empties and nothing is reopened (no new conversation is made). */
    const deleteEverything = async () => {
        try {
            if (pendingDeletion != null)
                clearTimeout(pendingDeletion.timer);
            setPendingDeletion(null);
            const report = await client.call("app.deleteEverything", {confirm: "delete everything"});
            openedFirst.current = true;
            setOpenId(null);
            setPrevious(null);
            await Promise.all([list.refresh(), models.refresh()]);
            return report;
        } catch (error) {
            showError(error);
            return undefined;
        }
    };

    const settingsDialog = settingsOpen && models.settings != null && (
        <SettingsDialog client={client} settings={models.settings} model={models.model} pendingRestart={models.pendingRestart}
            conversation={chat.conversation} onClose={() => setSettingsOpen(false)}
            onSave={(changes) => models.save(changes).catch(showError)}
            onLoadModel={(path) => models.loadModel(path).catch(showError)}
            onSetPolicy={setPolicy} onOpenModels={() => {
                setSettingsOpen(false);
                setModelsOpen(true);
            }} onDeleteEverything={deleteEverything} />
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
                    ? <main className="first-run" aria-label="Loading"><div className="first-run-card"><h1>Loading the model…</h1><p className="muted path">{models.model.path}</p><LoadProgress model={models.model} /></div></main>
                    : <FirstRunScreen model={models.model} onLoadModel={(path) => models.loadModel(path).catch(showError)}
                        onOpenModels={() => setModelsOpen(true)} />}
            </div>
        );

    const toggle = (which: "sidebar" | "isolation", label: string, icon: ReactNode) => narrow && (
        <button type="button" className="button button-ghost toggle" aria-expanded={drawer === which} aria-controls={which === "sidebar" ? "sidebar-drawer" : "isolation-drawer"}
            aria-label={label} title={label} onClick={() => setDrawer((current) => current === which ? null : which)}>{icon}</button>
    );
    const drawerClass = (which: "sidebar" | "isolation") => !narrow ? "pane" : drawer === which ? "pane drawer open" : "pane drawer";
    return (
        <div className={narrow ? "app app-narrow" : "app"}>
            <div id="sidebar-drawer" className={drawerClass("sidebar")} hidden={narrow && drawer !== "sidebar"}>
                <Sidebar conversations={list.conversations} openId={openId} searchInput={searchInput} onNew={() => void createConversation()}
                    onNewIncognito={() => void createIncognitoConversation()}
                    onOpen={(id) => {
                        setDrawer(null);
                        void switchTo(id);
                    }}
                    onRename={(id, title) => void list.rename(id, title).then(() => chat.refresh()).catch(showError)}
                    onDelete={(id) => void deleteConversation(id)} onPin={(id, pinned) => void list.pin(id, pinned).catch(showError)}
                    onSearch={list.search} onExportAll={(format) => void exportConversations(undefined, format)}
                    onImport={(text) => void importConversations(text)}
                    onOpenSettings={() => setSettingsOpen(true)} onOpenHelp={() => setHelpOpen(true)} />
            </div>
            <div className="center">
                <BannerStack banners={banners} onDismiss={dismiss} />
                {models.model.state === "loading" && (
                    <div className="banner banner-info" role="status" aria-label="Model loading"><LoadProgress model={models.model} /></div>
                )}
                <ChatView conversation={chat.conversation} messages={chat.messages} draft={chat.draft} generating={chat.generating} modelReady={modelReady}
                    cloud={cloudAccessOf(models.settings)} onSend={send} onResend={chat.editAndResend} onStop={() => void chat.stop()}
                    onRegenerate={(route) => void chat.regenerate(route)} onSetPolicy={setPolicy} onShowVersion={(id) => void chat.showVersion(id)}
                    onSaveDraft={chat.saveDraft} onUpload={upload} onDiscardUpload={discardUpload}
                    onOpenCitation={(conversationId, citation) => openCitation(client, conversationId, citation)}
                    headerStart={toggle("sidebar", "Conversations", <MenuIcon />)}
                    headerEnd={<>
                        {chat.conversation != null && <ExportMenu label="Export" onExport={(format) => void exportConversations(chat.conversation!.id, format)} />}
                        {toggle("isolation", "Isolation", <ShieldIcon />)}
                    </>} />
                {pendingDeletion != null && (
                    <div className="toast" role="status">
                        <span>Deleted “{pendingDeletion.title}”.</span>
                        <button type="button" className="button button-small" onClick={() => void undoDeletion()}>Undo</button>
                    </div>
                )}
            </div>
            <div id="isolation-drawer" className={drawerClass("isolation")} hidden={narrow && drawer !== "isolation"}>
                <IsolationPanel report={isolation.report} previous={previous} model={models.model.info}
                    apiSessions={<IsolationApiSessions client={client} />} />
            </div>
            {narrow && drawer != null && <div className="drawer-backdrop" aria-hidden="true" onClick={() => setDrawer(null)} />}
            {settingsDialog}
            {helpOpen && <HelpSheet onClose={() => setHelpOpen(false)} />}
            {secretReview.pending != null && (
                <SecretsFoundDialog findings={secretReview.pending} localUnavailable={localAnswerUnavailable(models.model)} onChoose={secretReview.answer} />
            )}
            {cloudDocumentsReview.pending != null && <CloudDocumentsDialog documents={cloudDocumentsReview.pending} onAnswer={cloudDocumentsReview.answer} />}
        </div>
    );
}

/** Puts the cursor in the message box (once the conversation's composer is there). */
function focusComposer() {
    requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>("textarea[aria-label='Message']")?.focus());
}

function MenuIcon() {
    return <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round"><path d="M2.5 4h11M2.5 8h11M2.5 12h11" /></svg>;
}

function ShieldIcon() {
    return <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round"><path d="M8 1.8l5 2v4c0 3-2.2 5.2-5 6.4C5.2 13 3 10.8 3 7.8v-4z" /></svg>;
}
