/** A duration for people: "42s", "3m05s", "1h02m". */
export function formatDuration(seconds: number): string {
    const whole = Math.max(0, Math.round(seconds));
    if (whole < 60)
        return `${whole}s`;
    if (whole < 3600)
        return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, "0")}s`;
    return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, "0")}m`;
}
