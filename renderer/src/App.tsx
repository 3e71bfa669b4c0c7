import {useCallback, useEffect, useReducer, useRef, type ReactNode} from "react";
import {cloudAccessOf} from "./cloudAccess.js";
import {MenuIcon, ShieldIcon} from "./components/AppIcons.js";
import {BannerStack} from "./components/BannerStack.js";
import {ChatView} from "./components/ChatView.js";
import {CloudDocumentsDialog} from "./components/CloudDocumentsDialog.js";
import {ExportMenu} from "./components/ExportMenu.js";
import {FirstRunScreen} from "./components/FirstRunScreen.js";
import {HelpSheet} from "./components/HelpSheet.js";
import {IsolationApiSessions} from "./components/IsolationApiSessions.js";
import {IsolationPanel} from "./components/IsolationPanel.js";
import {LoadProgress} from "./components/LoadProgress.js";
import {ModelsView} from "./components/models/ModelsView.js";
import {localAnswerUnavailable, SecretsFoundDialog} from "./components/SecretsFoundDialog.js";
import {SettingsDialog} from "./components/SettingsDialog.js";
import {Sidebar} from "./components/Sidebar.js";
import {UndoDeletionToast} from "./components/UndoDeletionToast.js";
import {useBanners} from "./hooks/useBanners.js";
import {useCloudDocumentsReview} from "./hooks/useCloudDocumentsReview.js";
import {useConversationActions} from "./hooks/useConversationActions.js";
import {useConversationList} from "./hooks/useConversationList.js";
import {useIsolationReport} from "./hooks/useIsolationReport.js";
import {useMediaQuery} from "./hooks/useMediaQuery.js";
import {useModelAndSettings} from "./hooks/useModelAndSettings.js";
import {useOpeningRules} from "./hooks/useOpeningRules.js";
import {useOpenConversation} from "./hooks/useOpenConversation.js";
import {useSecretReview} from "./hooks/useSecretReview.js";
import {useShortcuts} from "./hooks/useShortcuts.js";
import {useStatusBanners} from "./hooks/useStatusBanners.js";
import {useSwitchConversation} from "./hooks/useSwitchConversation.js";
import {useUndoableDelete} from "./hooks/useUndoableDelete.js";
import {initialNavigation, navigationReducer, type Drawer} from "./navigation.js";
import {openCitation} from "./openCitation.js";
import type {AppCoreClient} from "./transport/AppCoreClient.js";
import {uploadAttachment} from "./uploadAttachment.js";

/** Below this width the sidebar and the Isolation panel are drawers behind toggles. */
const narrowQuery = "(max-width: 899.98px)";

/**
 * The app: sidebar, chat and Isolation panel once a model is loaded, the first-run screen
 * before. Switching conversation ends the previous one's session, and the panel shows its scrub.
 * What the core knows comes from the query cache (the hooks); where the user is, from `navigationReducer`.
 */
export function App({client}: {client: AppCoreClient}) {
    const {banners, show, showError, dismiss} = useBanners();
    const [navigation, dispatch] = useReducer(navigationReducer, initialNavigation);
    const {openId, drawer, panel} = navigation;
    const models = useModelAndSettings(client, showError);
    const list = useConversationList(client, showError);
    const secretReview = useSecretReview();
    const cloudDocumentsReview = useCloudDocumentsReview();
    const chat = useOpenConversation(client, openId, showError, secretReview.review, cloudDocumentsReview.review);
    const isolation = useIsolationReport(client, openId);
    const upload = useCallback((file: File) => uploadAttachment(client, file), [client]);
    const discardUpload = useCallback((uploadId: string) => void client.call("attachments.discard", {uploadId}).catch(() => undefined), [client]);
    const narrow = useMediaQuery(narrowQuery);
    const searchInput = useRef<HTMLInputElement>(null);
    const modelReady = models.model?.state === "ready";

    useOpeningRules(navigation, dispatch, {conversations: list.conversations, listLoaded: list.loaded, modelKnown: models.model != null, modelReady,
        openMostRecentOrCreate: list.openMostRecentOrCreate}, showError);
    useStatusBanners(client, models.model, models.settings, {show, dismiss, showError});
    useEffect(() => {
        if (!narrow)
            dispatch({type: "drawerClosed"});
    }, [narrow]);

    const switchTo = useSwitchConversation(client, dispatch, {openId, generating: chat.generating, conversations: list.conversations}, showError);
    const actions = useConversationActions({client, openId, list, chat, dispatch, switchTo, show, showError});
    const deletion = useUndoableDelete({client, list, pendingDeletion: navigation.pendingDeletion, dispatch, show, showError});
    useShortcuts({
        newConversation: () => void actions.createConversation(),
        newIncognitoConversation: () => void actions.createIncognitoConversation(),
        search: () => {
            if (narrow)
                dispatch({type: "drawerOpened", drawer: "sidebar"});
            setTimeout(() => searchInput.current?.focus(), 0);
        },
        openSettings: () => dispatch({type: "panelOpened", panel: "settings"}),
        openHelp: () => dispatch({type: "panelOpened", panel: "help"}),
        escape: () => dispatch({type: "drawerClosed"})
    });

    if (models.model == null)
        return <div className="splash" role="status">{client.connection === "disconnected" ? "Connecting to the core…" : "Starting…"}<BannerStack banners={banners} onDismiss={dismiss} /></div>;

    /** "Delete everything" in Settings: the core wipes the store; the list empties and nothing is reopened (no new conversation is made). */
    const deleteEverything = async () => {
        try {
            deletion.forgetPendingDeletion();
            const report = await client.call("app.deleteEverything", {confirm: "delete everything"});
            dispatch({type: "everythingDeleted"});
            await Promise.all([list.refresh(), models.refresh()]);
            return report;
        } catch (error) {
            showError(error);
            return undefined;
        }
    };
    const closePanel = () => dispatch({type: "panelClosed"});

    if (panel === "models")
        return (
            <div className="app-models">
                <ModelsView client={client} banners={<BannerStack banners={banners} onDismiss={dismiss} />} onError={showError}
                    onBack={closePanel} onModelReady={() => {
                        // The default model is loaded: the chat opens (the first-run screen gives way to it).
                        closePanel();
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
                        onOpenModels={() => dispatch({type: "panelOpened", panel: "models"})} />}
            </div>
        );

    const toggle = (which: Drawer, label: string, icon: ReactNode) => narrow && (
        <button type="button" className="button button-ghost toggle" aria-expanded={drawer === which} aria-controls={which === "sidebar" ? "sidebar-drawer" : "isolation-drawer"}
            aria-label={label} title={label} onClick={() => dispatch({type: "drawerToggled", drawer: which})}>{icon}</button>
    );
    const drawerClass = (which: Drawer) => !narrow ? "pane" : drawer === which ? "pane drawer open" : "pane drawer";
    return (
        <div className={narrow ? "app app-narrow" : "app"}>
            <div id="sidebar-drawer" className={drawerClass("sidebar")} hidden={narrow && drawer !== "sidebar"}>
                <Sidebar conversations={list.conversations} openId={openId} searchInput={searchInput} onNew={() => void actions.createConversation()}
                    onNewIncognito={() => void actions.createIncognitoConversation()}
                    onOpen={(id) => {
                        dispatch({type: "drawerClosed"});
                        void switchTo(id);
                    }}
                    onRename={(id, title) => void list.rename(id, title).catch(showError)}
                    onDelete={(id) => void deletion.deleteConversation(id)} onPin={(id, pinned) => void list.pin(id, pinned).catch(showError)}
                    onSearch={list.search} onExportAll={(format) => void actions.exportConversations(undefined, format)}
                    onImport={(text) => void actions.importConversations(text)}
                    onOpenSettings={() => dispatch({type: "panelOpened", panel: "settings"})} onOpenHelp={() => dispatch({type: "panelOpened", panel: "help"})} />
            </div>
            <div className="center">
                <BannerStack banners={banners} onDismiss={dismiss} />
                {models.model.state === "loading" && (
                    <div className="banner banner-info" role="status" aria-label="Model loading"><LoadProgress model={models.model} /></div>
                )}
                <ChatView conversation={chat.conversation} messages={chat.messages} draft={chat.draft} generating={chat.generating} modelReady={modelReady}
                    cloud={cloudAccessOf(models.settings)} onSend={actions.send} onResend={chat.editAndResend} onStop={() => void chat.stop()}
                    onRegenerate={(route) => void chat.regenerate(route)} onSetPolicy={actions.setPolicy} onShowVersion={(id) => void chat.showVersion(id)}
                    onSaveDraft={chat.saveDraft} onUpload={upload} onDiscardUpload={discardUpload}
                    onOpenCitation={(conversationId, citation) => openCitation(client, conversationId, citation)}
                    headerStart={toggle("sidebar", "Conversations", <MenuIcon />)}
                    headerEnd={<>
                        {chat.conversation != null && <ExportMenu label="Export" onExport={(format) => void actions.exportConversations(chat.conversation!.id, format)} />}
                        {toggle("isolation", "Isolation", <ShieldIcon />)}
                    </>} />
                <UndoDeletionToast deletion={navigation.pendingDeletion} onUndo={() => void deletion.undoDeletion()} />
            </div>
            <div id="isolation-drawer" className={drawerClass("isolation")} hidden={narrow && drawer !== "isolation"}>
                <IsolationPanel report={isolation.report} previous={navigation.previous} model={models.model.info}
                    apiSessions={<IsolationApiSessions client={client} />} />
            </div>
            {narrow && drawer != null && <div className="drawer-backdrop" aria-hidden="true" onClick={() => dispatch({type: "drawerClosed"})} />}
            {panel === "settings" && models.settings != null && (
                <SettingsDialog client={client} settings={models.settings} model={models.model} pendingRestart={models.pendingRestart}
                    conversation={chat.conversation} onClose={closePanel}
                    onSave={(changes) => models.save(changes).catch(showError)}
                    onLoadModel={(path) => models.loadModel(path).catch(showError)}
                    onSetPolicy={actions.setPolicy} onOpenModels={() => dispatch({type: "panelOpened", panel: "models"})} onDeleteEverything={deleteEverything} />
            )}
            {panel === "help" && <HelpSheet onClose={closePanel} />}
            {secretReview.pending != null && (
                <SecretsFoundDialog findings={secretReview.pending} localUnavailable={localAnswerUnavailable(models.model)} onChoose={secretReview.answer} />
            )}
            {cloudDocumentsReview.pending != null && <CloudDocumentsDialog documents={cloudDocumentsReview.pending} onAnswer={cloudDocumentsReview.answer} />}
        </div>
    );
}
