import net from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago (for a server that cannot pick its own, like llama-server). */
export async function freePort(): Promise<number> {
    return await new Promise((resolve, reject) => {
        const server = net.createServer();
        server.listen(0, "127.0.0.1", () => {
            const address = server.address();
            server.close(() => (typeof address === "object" && address != null ? resolve(address.port) : reject(new Error("no port"))));
        });
    });
}
