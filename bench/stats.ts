import os from "node:os";
export function median(values: number[]) {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits = 2) {
    const factor = 10 ** digits;
    return Math.round(value * factor) / factor;
}

/** The 1-minute load average now: the benches record it at their start and end, since a busy machine moves every figure. */
export function loadAverage1m() {
    return round(os.loadavg()[0]!, 2);
}
