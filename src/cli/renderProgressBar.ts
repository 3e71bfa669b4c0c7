/** The width of the bar itself, in characters. Defaults to `30`. */
const defaultBarWidth = 30;

/** `[##########....................]  33%`: the one bar every CLI progress line draws. */
export function renderProgressBar(fraction: number, width: number = defaultBarWidth): string {
    const clamped = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
    const filled = Math.round(clamped * width);
    return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${(clamped * 100).toFixed(0).padStart(3)}%`;
}
