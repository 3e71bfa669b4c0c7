import fs from "node:fs";

export type InetSocket = {pid: number, inode: string, table: string, local: string, remote: string, state: string};

export type SocketWatchReport = {
    polls: number,
    pidsSeen: number[],
    /** Every TCP/UDP/raw socket (IPv4 or IPv6) any watched process held at a poll. */
    inetSockets: InetSocket[],
    /** Other sockets seen (Unix-domain IPC such as stdio socketpairs, netlink): counted, not a network. */
    otherSockets: number
};

const inetTables = ["tcp", "tcp6", "udp", "udp6", "raw", "raw6"];

/**
 * Polls /proc for the sockets a process and all its descendants hold: each /proc/<pid>/fd link
 * `socket:[inode]` is looked up in the network namespace's tcp/udp/raw tables. It sees native
 * sockets that no JavaScript hook can, but only those alive at a poll (every `intervalMs`).
 * Linux only.
 */
export class SocketWatcher {
    private readonly _rootPid: number;
    private readonly _intervalMs: number;
    private readonly _pids = new Set<number>();
    private readonly _inet = new Map<string, InetSocket>();
    private readonly _unix = new Set<string>();
    private _polls = 0;
    private _timer: NodeJS.Timeout | null = null;

    public constructor(rootPid: number, intervalMs = 5) {
        this._rootPid = rootPid;
        this._intervalMs = intervalMs;
    }

    public static supported() {
        return process.platform === "linux" && fs.existsSync("/proc/self/net/tcp");
    }

    public start(): this {
        this.poll();
        this._timer = setInterval(() => this.poll(), this._intervalMs);
        return this;
    }

    public stop(): SocketWatchReport {
        if (this._timer != null)
            clearInterval(this._timer);
        this._timer = null;
        return {polls: this._polls, pidsSeen: [...this._pids], inetSockets: [...this._inet.values()], otherSockets: this._unix.size};
    }

    public poll() {
        const pids = descendants(this._rootPid);
        if (pids.length === 0)
            return;
        this._polls++;
        const held = new Map<string, number>();
        for (const pid of pids) {
            this._pids.add(pid);
            let fds: string[];
            try {
                fds = fs.readdirSync(`/proc/${pid}/fd`);
            } catch {
                continue; // exited between listing and reading
            }
            for (const fd of fds) {
                try {
                    const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
                    if (match != null)
                        held.set(match[1]!, pid);
                } catch {
                    // closed meanwhile
                }
            }
        }
        if (held.size === 0)
            return;
        for (const table of inetTables) {
            let text: string;
            try {
                text = fs.readFileSync(`/proc/${pids[0]}/net/${table}`, "utf8");
            } catch {
                continue;
            }
            for (const line of text.split("\n").slice(1)) {
                const fields = line.trim().split(/\s+/);
                const inode = fields[9];
                if (inode != null && held.has(inode))
                    this._inet.set(`${table}:${inode}`, {
                        pid: held.get(inode)!, inode, table, local: fields[1] ?? "", remote: fields[2] ?? "", state: fields[3] ?? ""
                    });
            }
        }
        for (const inode of held.keys())
            if (![...this._inet.values()].some((socket) => socket.inode === inode))
                this._unix.add(inode);
    }
}

/** The process and all its descendants (through /proc/<pid>/task/<tid>/children). */
function descendants(root: number): number[] {
    const result: number[] = [];
    const queue = [root];
    while (queue.length > 0) {
        const pid = queue.shift()!;
        if (!fs.existsSync(`/proc/${pid}`))
            continue;
        result.push(pid);
        let tasks: string[] = [];
        try {
            tasks = fs.readdirSync(`/proc/${pid}/task`);
        } catch {
            continue;
        }
        for (const task of tasks) {
            try {
                for (const child of fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/))
                    if (child !== "")
                        queue.push(Number(child));
            } catch {
                // task ended
            }
        }
    }
    return result;
}
