/**
 * A size for people, in binary units as the app shows them everywhere (renderer, CLI, error
 * messages): "512 B", "1.5 KiB", "238 MiB", "4.6 GiB". Three significant figures at most.
 */
export function formatBytes(bytes: number): string {
    if (!Number.isFinite(bytes))
        return "unknown";
    if (Math.abs(bytes) < 1024)
        return `${Math.round(bytes)} B`;
    const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let value = bytes / 1024;
    let unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    return `${Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}
