/** Display helpers: sizes, times, counts. */

/** The one size formatter of the app, shared with the CLI and the core's messages. */
export {formatBytes} from "../../src/core/common/formatBytes.js";

// Made once: `toLocaleTimeString` and `toLocaleString` build a new Intl formatter on every call, which the isolation panel's
// timeline paid for each of its events on each streamed token. The same output: these are what those methods use.
const timeFormat = new Intl.DateTimeFormat(undefined, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
const countFormat = new Intl.NumberFormat();
const englishCountFormat = new Intl.NumberFormat("en-US");

export function formatTime(at: number): string {
    return timeFormat.format(at);
}

export function formatCount(value: number): string {
    return countFormat.format(value);
}

/** A count with English thousands separators whatever the machine's locale ("12,345"). */
export function formatEnglishCount(value: number): string {
    return englishCountFormat.format(value);
}

export function shortId(id: string): string {
    return id.length > 12 ? id.slice(0, 8) + "…" : id;
}
