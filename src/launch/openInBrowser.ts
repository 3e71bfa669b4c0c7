import {spawn} from "node:child_process";

/** Opens `url` in the user's default browser, best effort: a missing opener is not an error. */
export function openInBrowser(url: string) {
    const [command, args] = process.platform === "darwin"
        ? ["open", [url]]
        : process.platform === "win32"
            ? ["cmd", ["/c", "start", "", url]]
            : ["xdg-open", [url]];
    try {
        const child = spawn(command, args, {stdio: "ignore", detached: true});
        child.on("error", () => {});
        child.unref();
    } catch {
        // No opener: the URL is printed, which is enough.
    }
}
