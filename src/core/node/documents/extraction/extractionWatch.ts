import {describeBytes} from "./describeBytes.js";
import type {ExtractorLimits} from "./runExtractor.js";
import {AttachmentUnreadableError, type ExtractedPage} from "./types.js";

/** How often the extractor's memory is checked against its limit. */
const memoryCheckIntervalMs = 100;

export type ExtractionWatch = {
    /** Settles the extraction once (later calls do nothing): stops the watch and the extractor, then runs `outcome`. */
    finish: (outcome: () => void) => void,
    /** Settles it as `extractor-crashed` with this problem. */
    crashed: (problem: string) => void
};

/**
 * The limits every extractor runs under, however it is isolated: stopped past `timeoutMs`, past
 * `maxResidentBytes` of memory (as `residentBytes` measures it, checked every 100 ms), and when
 * the caller aborts. `stop` ends the extractor (kills its process, terminates its worker).
 */
export function watchExtraction(name: string, limits: ExtractorLimits, reject: (error: unknown) => void, extractor: {
    stop: () => void,
    residentBytes: () => Promise<number | null>,
    maxResidentBytes: number
}): ExtractionWatch {
    let settled = false;
    const finish = (outcome: () => void) => {
        if (settled)
            return;
        settled = true;
        clearTimeout(timer);
        clearInterval(memoryWatch);
        limits.signal?.removeEventListener("abort", onAbort);
        extractor.stop();
        outcome();
    };
    const crashed = (problem: string) => finish(() => reject(new AttachmentUnreadableError(name, "extractor-crashed", problem)));
    const timer = setTimeout(() => finish(() => reject(new AttachmentUnreadableError(name, "timeout",
        `took longer than ${limits.timeoutMs / 1000} s to read and was stopped; it may be damaged or built to stall readers`,
        {limitMs: limits.timeoutMs}))), limits.timeoutMs);
    const memoryWatch = setInterval(() => {
        extractor.residentBytes().then((residentBytes) => {
            if (residentBytes != null && residentBytes > extractor.maxResidentBytes)
                crashed(`needed more than ${describeBytes(extractor.maxResidentBytes)} of memory to read and was stopped; it may be damaged or built to exhaust memory`);
        }, () => undefined);
    }, memoryCheckIntervalMs);
    const onAbort = () => finish(() => reject(limits.signal!.reason));
    limits.signal?.addEventListener("abort", onAbort, {once: true});
    return {finish, crashed};
}

/** The outcome of the extractor's answer: its pages (and what it used reported), or its refusal. */
export function settleWithReply(watch: ExtractionWatch, resolve: (pages: ExtractedPage[]) => void, reject: (error: unknown) => void,
    readPages: () => ExtractedPage[]) {
    watch.finish(() => {
        try {
            resolve(readPages());
        } catch (error) {
            reject(error);
        }
    });
}
