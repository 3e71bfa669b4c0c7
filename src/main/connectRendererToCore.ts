import {ipcMain, MessageChannelMain, type BrowserWindow, type IpcMainEvent} from "electron";
import type {CoreProcess} from "./CoreProcess.js";
import {electronIpcChannels as ipcChannels} from "../core/common/rpc/electronIpcChannels.js";
import {isAppUrl} from "./securityPolicy.js";

/** Only our window's main frame, showing our own page, may ask for a port to the core. */
export function isTrustedSender(event: IpcMainEvent, window: BrowserWindow): boolean {
    const frame = event.senderFrame;
    return !window.isDestroyed()
        && event.sender === window.webContents
        && frame != null
        && frame === event.sender.mainFrame
        && isAppUrl(frame.url);
}

/**
 * Gives the renderer a MessagePort to the core, then steps aside: the API never passes through
 * main. When the core dies the renderer is told (it keeps its window and shows a banner) and
 * gets a new port once the core is back.
 */
export function connectRendererToCore(window: BrowserWindow, core: CoreProcess): () => void {
    let wanted = false;
    const sendPort = (reason: "initial" | "restarted") => {
        if (window.isDestroyed() || !core.running)
            return;
        const {port1, port2} = new MessageChannelMain();
        core.connect(port1);
        window.webContents.postMessage(ipcChannels.corePort, {reason}, [port2]);
    };

    const onRequest = (event: IpcMainEvent) => {
        if (!isTrustedSender(event, window))
            return;
        wanted = true;
        sendPort("initial");
    };
    ipcMain.on(ipcChannels.requestCorePort, onRequest);
    const stopExit = core.onExit.createListener(() => {
        if (!window.isDestroyed())
            window.webContents.send(ipcChannels.coreExited);
    });
    const stopStart = core.onStart.createListener(() => {
        if (wanted)
            sendPort("restarted");
    });

    return () => {
        ipcMain.off(ipcChannels.requestCorePort, onRequest);
        stopExit.dispose();
        stopStart.dispose();
    };
}
