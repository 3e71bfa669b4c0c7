/** A size as a person reads it: "200 MB", "1.5 KB", "312 bytes", "1 byte" (1 MB = 1024 × 1024 bytes). */
export function describeBytes(bytes: number): string {
    const units: Array<[string, number]> = [["GB", 1024 ** 3], ["MB", 1024 ** 2], ["KB", 1024]];
    for (const [unit, size] of units)
        if (bytes >= size)
            return `${(bytes / size).toFixed(1).replace(/\.0$/, "")} ${unit}`;
    return bytes === 1 ? "1 byte" : `${bytes} bytes`;
}
