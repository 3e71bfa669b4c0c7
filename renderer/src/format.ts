/** Display helpers: sizes, times, counts. */

/** The one size formatter of the app, shared with the CLI and the core's messages. */
export {formatBytes} from "../../src/core/common/formatBytes.js";

export function formatTime(at: number): string {
    return new Date(at).toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
}

export function formatCount(value: number): string {
    return value.toLocaleString();
}

export function shortId(id: string): string {
    return id.length > 12 ? id.slice(0, 8) + "…" : id;
}
