/**
 * Control preload for the network-silence test: makes the kinds of attempts the observers must
 * see (a TCP connection to $CLEANROOM_NET_CONTROL_PORT on 127.0.0.1, held open 300 ms; a UDP
 * datagram; a DNS lookup), then lets the program run. Errors (the guard blocking) are swallowed.
 */
import dgram from "node:dgram";
import dns from "node:dns";
import net from "node:net";

const port = Number(process.env.CLEANROOM_NET_CONTROL_PORT);

await new Promise<void>((resolve) => {
    try {
        const socket = net.connect(port, "127.0.0.1");
        socket.on("connect", () => setTimeout(() => {
            socket.end();
            resolve();
        }, 300));
        socket.on("error", () => resolve());
    } catch {
        resolve();
    }
});
try {
    const udp = dgram.createSocket("udp4");
    udp.send(Buffer.from("control"), port, "127.0.0.1", () => udp.close());
} catch {
    // blocked
}
try {
    dns.lookup("localhost", () => undefined);
} catch {
    // blocked
}
