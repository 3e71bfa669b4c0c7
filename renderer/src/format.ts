/** Display helpers: sizes, times, counts. */

export function formatBytes(bytes: number): string {
    if (bytes < 1024)
        return `${bytes} B`;
    const units = ["KiB", "MiB", "GiB", "TiB"];
    let value = bytes / 1024;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}

export function formatTime(at: number): string {
    return new Date(at).toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
}

export function formatCount(value: number): string {
    return value.toLocaleString();
}

export function shortId(id: string): string {
    return id.length > 12 ? id.slice(0, 8) + "…" : id;
}
