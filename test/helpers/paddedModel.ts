import crypto from "node:crypto";

/** The test model followed by deterministic filler: a GGUF-headed file of `totalBytes` (a valid model; the filler is never read). */
export function paddedModel(model: Buffer, totalBytes: number): Buffer {
    const filler = crypto.createCipheriv("aes-256-ctr", Buffer.alloc(32, 7), Buffer.alloc(16, 0)).update(Buffer.alloc(totalBytes - model.length));
    return Buffer.concat([model, filler]);
}

export function sha256Of(buffer: Buffer): string {
    return crypto.createHash("sha256").update(buffer).digest("hex");
}
