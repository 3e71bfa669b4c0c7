/**
 * What a test file's helpers can say about a failure, printed on stderr after any of the file's tests fails
 * (test/setup/hermetic.ts): web mode's stderr, which otherwise goes with the process (e2eApp adds it while its app is open).
 */
const sources = new Set<() => string>();

/** Adds a source of diagnostics; the function returned removes it (call it when what it describes is gone). */
export function addFailureDiagnostics(describe: () => string): () => void {
    sources.add(describe);
    return () => sources.delete(describe);
}

/** Each source's text now; a source that throws says so instead. */
export function failureDiagnostics(): string[] {
    return [...sources].map((describe) => {
        try {
            return describe();
        } catch (error) {
            return `(diagnostics could not be read: ${String(error)})`;
        }
    });
}

/** The last `count` lines of `text`. */
export function lastLines(text: string, count: number): string {
    return text.trimEnd().split("\n").slice(-count).join("\n");
}
