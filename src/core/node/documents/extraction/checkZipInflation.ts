import zlib from "node:zlib";
import {describeBytes} from "./describeBytes.js";
import {AttachmentUnreadableError} from "./types.js";

const endOfCentralDirectorySignature = 0x06054b50;
const centralDirectoryEntrySignature = 0x02014b50;
const localFileHeaderSignature = 0x04034b50;
/** The end record (22 bytes) may be followed by a comment of up to 65,535 bytes. */
const endRecordSearchBytes = 22 + 0xffff;
/** A value every size field of ZIP64 archives holds; no document under the size limit needs ZIP64. */
const zip64Marker = 0xffffffff;
const maxEntries = 10_000;

export type ZipEntry = {name: string, method: number, compressedSize: number, declaredSize: number, localHeaderOffset: number};

/**
 * The entries of a ZIP archive (a DOCX), read from its central directory; refused as corrupt when
 * the directory is missing or points outside the file.
 */
export function readZipDirectory(name: string, bytes: Uint8Array): ZipEntry[] {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const corrupt = (why: string) => new AttachmentUnreadableError(name, "corrupt", `is damaged or cut short: ${why}`);
    let end = -1;
    for (let offset = bytes.byteLength - 22; offset >= Math.max(0, bytes.byteLength - endRecordSearchBytes); offset--) {
        if (view.getUint32(offset, true) === endOfCentralDirectorySignature) {
            end = offset;
            break;
        }
    }
    if (end < 0)
        throw corrupt("its ZIP directory is missing");
    const count = view.getUint16(end + 10, true);
    const directorySize = view.getUint32(end + 12, true);
    const directoryOffset = view.getUint32(end + 16, true);
    if (count === 0xffff || directoryOffset === zip64Marker)
        throw corrupt("it claims more entries than a document has (ZIP64)");
    if (count > maxEntries)
        throw corrupt(`it has ${count} parts; a document has far fewer than ${maxEntries}`);
    if (directoryOffset + directorySize > end)
        throw corrupt("its ZIP directory points past the end of the file");

    const entries: ZipEntry[] = [];
    let offset = directoryOffset;
    for (let index = 0; index < count; index++) {
        if (offset + 46 > end || view.getUint32(offset, true) !== centralDirectoryEntrySignature)
            throw corrupt("its ZIP directory is broken");
        const nameLength = view.getUint16(offset + 28, true);
        const extraLength = view.getUint16(offset + 30, true);
        const commentLength = view.getUint16(offset + 32, true);
        if (offset + 46 + nameLength > end)
            throw corrupt("its ZIP directory is broken");
        entries.push({
            name: new TextDecoder().decode(bytes.subarray(offset + 46, offset + 46 + nameLength)),
            method: view.getUint16(offset + 10, true),
            compressedSize: view.getUint32(offset + 20, true),
            declaredSize: view.getUint32(offset + 24, true),
            localHeaderOffset: view.getUint32(offset + 42, true)
        });
        offset += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
}

/**
 * Refuses a ZIP archive that inflates to more than `maxInflatedBytes`, a zip bomb: first by the
 * sizes its directory declares (nothing inflated yet), then by inflating each part with that
 * budget as a hard stop (zlib gives up as soon as the output would pass it), since a directory
 * can lie. Parts that several entries share are counted each time, as a reader would inflate them.
 */
export function checkZipInflation(name: string, bytes: Uint8Array, entries: ZipEntry[], maxInflatedBytes: number): void {
    const tooLarge = (size: string) => new AttachmentUnreadableError(name, "inflated-too-large",
        `would unpack to ${size}, over the limit of ${describeBytes(maxInflatedBytes)} (a "zip bomb"); nothing was unpacked past the limit`,
        {limit: maxInflatedBytes});
    const declared = entries.reduce((total, entry) => total + (entry.declaredSize === zip64Marker ? Infinity : entry.declaredSize), 0);
    if (declared > maxInflatedBytes)
        throw tooLarge(Number.isFinite(declared) ? describeBytes(declared) : "more than 4 GB");

    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const corrupt = (why: string) => new AttachmentUnreadableError(name, "corrupt", `is damaged or cut short: ${why}`);
    let inflated = 0;
    for (const entry of entries) {
        const header = entry.localHeaderOffset;
        if (header + 30 > bytes.byteLength || view.getUint32(header, true) !== localFileHeaderSignature)
            throw corrupt(`the part ${entry.name} is missing`);
        const dataStart = header + 30 + view.getUint16(header + 26, true) + view.getUint16(header + 28, true);
        if (dataStart + entry.compressedSize > bytes.byteLength)
            throw corrupt(`the part ${entry.name} is cut short`);
        const data = bytes.subarray(dataStart, dataStart + entry.compressedSize);
        const budget = maxInflatedBytes - inflated;
        let size: number;
        if (entry.method === 0)
            size = data.byteLength;
        else if (entry.method === 8) {
            try {
                size = zlib.inflateRawSync(data, {maxOutputLength: Math.max(1, budget)}).byteLength;
            } catch (error) {
                if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
                    throw tooLarge(`more than ${describeBytes(maxInflatedBytes)} (its directory said ${describeBytes(declared)})`);
                throw corrupt(`the part ${entry.name} does not inflate`);
            }
        } else
            throw corrupt(`the part ${entry.name} uses compression method ${entry.method}, which Word documents do not use`);
        if (size > budget)
            throw tooLarge(`more than ${describeBytes(maxInflatedBytes)}`);
        if (size !== entry.declaredSize)
            throw corrupt(`the part ${entry.name} is ${size} bytes, not the ${entry.declaredSize} its directory says`);
        inflated += size;
    }
}
