import {randomUUID} from "node:crypto";
import path from "node:path";
import {InvalidInputError} from "../../common/errors.js";
import {describeBytes} from "./extraction/describeBytes.js";
import {extractDocument} from "./extraction/extractDocument.js";
import {AttachmentUnreadableError, defaultMaxDocumentBytes, type ExtractedDocument} from "./extraction/types.js";

/** Whose uploads these are: one client connection (a web mode socket), or the core's own callers. */
export type UploadOwner = object;

/** What one client may hold in uploads not yet sent or discarded, all together. */
export const defaultMaxPendingUploadBytes = 2 * defaultMaxDocumentBytes;

type Upload = {
    owner: UploadOwner,
    name: string,
    /** The size the client announced; the upload is finished once this many bytes came. */
    bytes: number,
    chunks: Buffer[],
    received: number,
    extracting: boolean,
    document: ExtractedDocument | null
};

/**
 * Documents a web mode client sends in chunks (#23): its browser cannot name a file on this
 * machine. The bytes are held in this process's memory only (never a temp file) until the upload
 * is finished, then read (`extractDocument`) and kept as text until a turn takes it or the client
 * discards it. Each upload belongs to the connection that began it: another connection cannot
 * see it, and a closed connection's uploads are dropped (`discardOwner`), as all are when the core
 * is disposed (the app locks). A connection holds at most `maxPendingBytes` at once.
 */
export class PendingUploads {
    private readonly _uploads = new Map<string, Upload>();
    private readonly _maxDocumentBytes: number;
    private readonly _maxPendingBytes: number;

    public constructor({maxDocumentBytes = defaultMaxDocumentBytes, maxPendingBytes = defaultMaxPendingUploadBytes} = {}) {
        this._maxDocumentBytes = maxDocumentBytes;
        this._maxPendingBytes = maxPendingBytes;
    }

    public begin(owner: UploadOwner, name: string, bytes: number): string {
        const shownName = path.basename(name.replace(/\\/g, "/"));
        if (bytes > this._maxDocumentBytes)
            throw new AttachmentUnreadableError(shownName, "too-large", `is ${describeBytes(bytes)}; the limit is ${describeBytes(this._maxDocumentBytes)}`,
                {bytes, limit: this._maxDocumentBytes});
        const pending = this._pendingBytesOf(owner);
        if (pending + bytes > this._maxPendingBytes)
            throw new InvalidInputError("attachments.uploadBegin", [
                `${shownName} (${describeBytes(bytes)}) does not fit beside the ${describeBytes(pending)} of documents already waiting to be sent ` +
                `(at most ${describeBytes(this._maxPendingBytes)} at once): send or remove some first`
            ]);
        const uploadId = randomUUID();
        this._uploads.set(uploadId, {owner, name: shownName, bytes, chunks: [], received: 0, extracting: false, document: null});
        return uploadId;
    }

    public chunk(owner: UploadOwner, uploadId: string, offset: number, data: Buffer) {
        const upload = this._get(owner, uploadId, "attachments.uploadChunk");
        if (upload.document != null || upload.extracting)
            throw new InvalidInputError("attachments.uploadChunk", [`upload ${uploadId} is already finished`]);
        if (offset !== upload.received)
            throw new InvalidInputError("attachments.uploadChunk", [`offset: expected ${upload.received} (the bytes received so far), got ${offset}`]);
        if (upload.received + data.byteLength > upload.bytes)
            throw new InvalidInputError("attachments.uploadChunk", [`this chunk ends at byte ${upload.received + data.byteLength}, past the ${upload.bytes} bytes announced`]);
        upload.chunks.push(data);
        upload.received += data.byteLength;
        return {received: upload.received};
    }

    /** Reads the finished upload; an unreadable one is dropped and its `AttachmentUnreadableError` thrown. */
    public async finish(owner: UploadOwner, uploadId: string): Promise<ExtractedDocument> {
        const upload = this._get(owner, uploadId, "attachments.uploadFinish");
        if (upload.document != null)
            return upload.document;
        if (upload.extracting)
            throw new InvalidInputError("attachments.uploadFinish", [`upload ${uploadId} is already being read`]);
        if (upload.received !== upload.bytes)
            throw new InvalidInputError("attachments.uploadFinish", [`upload ${uploadId} has ${upload.received} of its ${upload.bytes} bytes; send the rest first`]);
        upload.extracting = true;
        const bytes = Buffer.concat(upload.chunks);
        upload.chunks = [];
        try {
            const document = await extractDocument({kind: "bytes", name: upload.name, bytes}, {maxBytes: this._maxDocumentBytes});
            bytes.fill(0);
            if (this._uploads.get(uploadId) !== upload)
                throw unknownUpload("attachments.uploadFinish", uploadId); // discarded while it was read
            upload.document = document;
            upload.extracting = false;
            return document;
        } catch (error) {
            bytes.fill(0);
            this._uploads.delete(uploadId);
            throw error;
        }
    }

    /** The read documents of `uploadIds`, which stay pending until `release` (a refused turn keeps them). */
    public documents(owner: UploadOwner, uploadIds: readonly string[], method: string): ExtractedDocument[] {
        return uploadIds.map((uploadId) => {
            const upload = this._get(owner, uploadId, method);
            if (upload.document == null)
                throw new InvalidInputError(method, [`upload ${uploadId} (${upload.name}) is not finished: call attachments.uploadFinish first`]);
            return upload.document;
        });
    }

    public release(owner: UploadOwner, uploadIds: readonly string[]) {
        for (const uploadId of uploadIds)
            if (this._uploads.get(uploadId)?.owner === owner)
                this._discard(uploadId);
    }

    /** Drops one upload; false when there was none of this owner by that id. */
    public discard(owner: UploadOwner, uploadId: string): boolean {
        if (this._uploads.get(uploadId)?.owner !== owner)
            return false;
        this._discard(uploadId);
        return true;
    }

    public discardOwner(owner: UploadOwner) {
        for (const [uploadId, upload] of this._uploads)
            if (upload.owner === owner)
                this._discard(uploadId);
    }

    public clear() {
        for (const uploadId of [...this._uploads.keys()])
            this._discard(uploadId);
    }

    private _discard(uploadId: string) {
        const upload = this._uploads.get(uploadId);
        for (const chunk of upload?.chunks ?? [])
            chunk.fill(0);
        this._uploads.delete(uploadId);
    }

    private _pendingBytesOf(owner: UploadOwner) {
        let total = 0;
        for (const upload of this._uploads.values())
            if (upload.owner === owner)
                total += upload.bytes;
        return total;
    }

    private _get(owner: UploadOwner, uploadId: string, method: string): Upload {
        const upload = this._uploads.get(uploadId);
        if (upload == null || upload.owner !== owner)
            throw unknownUpload(method, uploadId);
        return upload;
    }
}

function unknownUpload(method: string, uploadId: string) {
    return new InvalidInputError(method, [
        `no upload ${uploadId} on this connection: it was sent with a message, removed, refused, or its connection closed; attach the file again`
    ]);
}
