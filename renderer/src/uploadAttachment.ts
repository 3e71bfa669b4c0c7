import {maxUploadChunkBytes, type ApiOutput} from "../../src/core/common/api/index.js";
import type {CoreClient} from "../../src/core/common/rpc/index.js";

/** A file read by the core and held there for the next message: what its chip shows. */
export type UploadedAttachment = ApiOutput<"attachments.uploadFinish">;

/**
 * Sends `file` to the core in chunks over the RPC (web mode's browser cannot name a path) and has
 * it read there. Resolves with what the core read; rejects with its error (ATTACHMENT_UNREADABLE
 * names the file and why). An upload that fails midway is discarded.
 */
export async function uploadAttachment(client: CoreClient, file: File): Promise<UploadedAttachment> {
    const {uploadId} = await client.call("attachments.uploadBegin", {name: file.name, bytes: file.size});
    try {
        for (let offset = 0; offset < file.size; offset += maxUploadChunkBytes) {
            const chunk = new Uint8Array(await file.slice(offset, offset + maxUploadChunkBytes).arrayBuffer());
            await client.call("attachments.uploadChunk", {uploadId, offset, base64: toBase64(chunk)});
        }
        return await client.call("attachments.uploadFinish", {uploadId});
    } catch (error) {
        void client.call("attachments.discard", {uploadId}).catch(() => undefined);
        throw error;
    }
}

function toBase64(bytes: Uint8Array) {
    let binary = "";
    for (let index = 0; index < bytes.length; index += 0x8000)
        binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
    return btoa(binary);
}
