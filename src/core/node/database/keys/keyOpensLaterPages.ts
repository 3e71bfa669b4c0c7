import crypto from "node:crypto";
import fs from "node:fs";

/** Page sizes SQLCipher may use, the default first. */
const pageSizes = [4096, 1024, 2048, 8192, 16384, 32768, 65536];
/** Pages after the first that are checked: one intact is enough. */
const pagesChecked = 8;
/** SQLCipher 4's page trailer: a 16-byte IV, then the HMAC-SHA512 of the page's ciphertext, its IV and its number (what precedes it). */
const hmacBytes = 64;
const saltBytes = 16;

/**
 * Whether `key` authenticates any page of `file` after the first, by SQLCipher 4's own check
 * (HMAC-SHA512 keyed from the key and the salt in the file's first 16 bytes, over each page's
 * ciphertext, IV and number). When SQLite cannot read the first page (`SQLITE_NOTADB`) but this
 * is true, the key is the database's and the first page is damaged; when false, the key is
 * another database's, or the salt itself is damaged (the two cannot be told apart).
 */
export function keyOpensLaterPages(file: string, key: Buffer): boolean {
    let fd: number;
    try {
        fd = fs.openSync(file, "r");
    } catch {
        return false;
    }
    try {
        const size = fs.fstatSync(fd).size;
        const salt = Buffer.alloc(saltBytes);
        if (fs.readSync(fd, salt, 0, saltBytes, 0) !== saltBytes)
            return false;
        const hmacKey = crypto.pbkdf2Sync(key, salt.map((byte) => byte ^ 0x3a), 2, 32, "sha512");
        for (const pageSize of pageSizes)
            for (let pageNumber = 2; pageNumber <= Math.min(size / pageSize, pagesChecked + 1); pageNumber++) {
                const page = Buffer.alloc(pageSize);
                fs.readSync(fd, page, 0, pageSize, (pageNumber - 1) * pageSize);
                const number = Buffer.alloc(4);
                number.writeUInt32LE(pageNumber);
                const mac = crypto.createHmac("sha512", hmacKey).update(page.subarray(0, pageSize - hmacBytes)).update(number).digest();
                if (crypto.timingSafeEqual(mac, page.subarray(pageSize - hmacBytes)))
                    return true;
            }
        return false;
    } finally {
        fs.closeSync(fd);
    }
}
