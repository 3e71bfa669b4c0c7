import fs from "node:fs";

/** Clock ticks per second of /proc's times (USER_HZ): 100 on every Linux architecture Node runs on. */
const clockTicksPerSecond = 100;

/**
 * CPU time (user + system, ms) of the children this process has waited for, with theirs (Linux:
 * cutime + cstime of /proc/self/stat), or null where there is no /proc. The difference around a
 * `spawnSync` is what that process used, whatever else the machine was doing.
 */
export function childrenCpuMs(): number | null {
    let stat: string;
    try {
        stat = fs.readFileSync("/proc/self/stat", "utf8");
    } catch {
        return null;
    }
    // The fields after the command name (which may hold spaces), in parentheses: state is field 3, cutime 16, cstime 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 1000 / clockTicksPerSecond;
}
