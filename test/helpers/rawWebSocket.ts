import crypto from "node:crypto";
import net from "node:net";

export type FrameOptions = {
    opcode: number,
    payload?: Buffer,
    /** Defaults to `true`. */
    fin?: boolean,
    /** Defaults to `false`. */
    rsv1?: boolean,
    /** A client must mask every frame. Defaults to `true`. */
    masked?: boolean,
    /** The length the header announces, when it should differ from the payload's. */
    announcedLength?: number
};

export type ServerFrame = {opcode: number, payload: Buffer};

/**
 * One WebSocket connection spoken byte by byte over a plain TCP socket, so a test can send
 * what no WebSocket library would (bad UTF-8, unmasked or reserved frames, RSV bits, oversize
 * lengths) and see exactly what the server answers.
 */
export class RawWebSocket {
    public readonly frames: ServerFrame[] = [];
    private readonly _socket: net.Socket;
    private _buffer = Buffer.alloc(0);
    private _ended = false;
    private readonly _waiters = new Set<() => void>();

    private constructor(socket: net.Socket, rest: Buffer) {
        this._socket = socket;
        socket.on("data", (chunk: Buffer) => this._take(chunk));
        socket.on("close", () => {
            this._ended = true;
            this._wake();
        });
        socket.on("error", () => undefined);
        this._take(rest);
    }

    /** Opens `ws://127.0.0.1:<port><path>` with our Origin and Host; rejects unless the server answers 101. */
    public static open(port: number, path: string): Promise<RawWebSocket> {
        return new Promise((resolve, reject) => {
            const socket = net.connect(port, "127.0.0.1");
            let head = Buffer.alloc(0);
            const onData = (chunk: Buffer) => {
                head = Buffer.concat([head, chunk]);
                const end = head.indexOf("\r\n\r\n");
                if (end < 0)
                    return;
                socket.off("data", onData);
                const status = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
                if (!/^HTTP\/1\.1 101 /.test(status)) {
                    socket.destroy();
                    reject(new Error(`the upgrade was refused: ${status}`));
                    return;
                }
                resolve(new RawWebSocket(socket, head.subarray(end + 4)));
            };
            socket.on("data", onData);
            socket.once("error", reject);
            socket.once("connect", () => socket.write([
                `GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Origin: http://127.0.0.1:${port}`, "Upgrade: websocket", "Connection: Upgrade",
                `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString("base64")}`, "Sec-WebSocket-Version: 13", "", ""
            ].join("\r\n")));
        });
    }

    /** The bytes of one frame as a client would send it (masked unless told otherwise). */
    public static frame({opcode, payload = Buffer.alloc(0), fin = true, rsv1 = false, masked = true, announcedLength = payload.length}: FrameOptions): Buffer {
        const first = (fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | (opcode & 0x0f);
        const maskBit = masked ? 0x80 : 0;
        let header: Buffer;
        if (announcedLength < 126)
            header = Buffer.from([first, maskBit | announcedLength]);
        else if (announcedLength < 65_536) {
            header = Buffer.alloc(4);
            header[0] = first;
            header[1] = maskBit | 126;
            header.writeUInt16BE(announcedLength, 2);
        } else {
            header = Buffer.alloc(10);
            header[0] = first;
            header[1] = maskBit | 127;
            header.writeBigUInt64BE(BigInt(announcedLength), 2);
        }
        if (!masked)
            return Buffer.concat([header, payload]);
        const mask = crypto.randomBytes(4);
        return Buffer.concat([header, mask, payload.map((byte, index) => byte ^ mask[index % 4]!)]);
    }

    /** A masked text frame carrying `text` (UTF-8). */
    public static text(text: string): Buffer {
        return RawWebSocket.frame({opcode: 0x1, payload: Buffer.from(text, "utf8")});
    }

    public write(bytes: Buffer) {
        this._socket.write(bytes);
    }

    /** The text of every text frame received so far, parsed as JSON. */
    public messages(): unknown[] {
        return this.frames.filter((frame) => frame.opcode === 0x1).map((frame) => JSON.parse(frame.payload.toString("utf8")) as unknown);
    }

    /** Resolves once `ready()` holds, or rejects after `timeoutMs` (a hang guard). */
    public async until(ready: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
        const started = Date.now();
        while (!ready()) {
            if (Date.now() - started >= timeoutMs)
                throw new Error(`no ${what} within ${timeoutMs} ms; frames received: ${JSON.stringify(this.frames.map((frame) => frame.opcode))}`);
            await new Promise<void>((resolve) => {
                this._waiters.add(resolve);
                setTimeout(resolve, 200);
            });
        }
    }

    /** The close code of the server's close frame (waits for it), and whether the server then closed the TCP connection. */
    public async closeCode(): Promise<{code: number | null, reason: string, tcpClosed: boolean}> {
        await this.until(() => this.frames.some((frame) => frame.opcode === 0x8) || this._ended, "close frame");
        const close = this.frames.find((frame) => frame.opcode === 0x8);
        await this.until(() => this._ended, "end of the TCP connection");
        return {
            code: close != null && close.payload.length >= 2 ? close.payload.readUInt16BE(0) : null,
            reason: close != null ? close.payload.subarray(2).toString("utf8") : "",
            tcpClosed: this._ended
        };
    }

    public destroy() {
        this._socket.destroy();
    }

    private _take(chunk: Buffer) {
        this._buffer = Buffer.concat([this._buffer, chunk]);
        for (;;) {
            if (this._buffer.length < 2)
                break;
            const opcode = this._buffer[0]! & 0x0f;
            let length = this._buffer[1]! & 0x7f;
            let offset = 2;
            if (length === 126) {
                if (this._buffer.length < 4)
                    break;
                length = this._buffer.readUInt16BE(2);
                offset = 4;
            } else if (length === 127) {
                if (this._buffer.length < 10)
                    break;
                length = Number(this._buffer.readBigUInt64BE(2));
                offset = 10;
            }
            if (this._buffer.length < offset + length)
                break;
            this.frames.push({opcode, payload: Buffer.from(this._buffer.subarray(offset, offset + length))});
            this._buffer = this._buffer.subarray(offset + length);
        }
        this._wake();
    }

    private _wake() {
        for (const waiter of this._waiters)
            waiter();
        this._waiters.clear();
    }
}
