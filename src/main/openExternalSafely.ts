import {shell} from "electron";

/** Opens a link in the user's browser only when it is a well-formed https URL without credentials. */
export function isSafeExternalUrl(url: string): boolean {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        return false;
    }
    return parsed.protocol === "https:" && parsed.username === "" && parsed.password === "" && parsed.hostname !== "";
}

export async function openExternalSafely(url: string): Promise<boolean> {
    if (!isSafeExternalUrl(url))
        return false;

    await shell.openExternal(url, {activate: true});
    return true;
}
