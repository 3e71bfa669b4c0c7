import net from "node:net";

/**
 * What kind of network an IP address belongs to, for the download policy: only `public`
 * addresses are fetched from (and `loopback` when the policy allows it).
 */
export type AddressClass =
    | "public"
    | "loopback"
    | "private"
    | "shared"
    | "link-local"
    | "unique-local"
    | "unspecified"
    | "multicast"
    | "reserved"
    | "invalid";

type Range = {base: bigint, bits: number, prefix: number, kind: AddressClass};

const v4 = (cidr: string, kind: AddressClass): Range => {
    const [address, prefix] = cidr.split("/") as [string, string];
    return {base: BigInt(ipv4ToNumber(address)), bits: 32, prefix: Number(prefix), kind};
};
const v6 = (cidr: string, kind: AddressClass): Range => {
    const [address, prefix] = cidr.split("/") as [string, string];
    return {base: ipv6ToBigInt(address)!, bits: 128, prefix: Number(prefix), kind};
};

/** IPv4 ranges that are not the public internet (RFC 6890 and its updates). */
const ipv4Ranges: readonly Range[] = [
    v4("0.0.0.0/8", "unspecified"), // "this network"; 0.0.0.0 reaches the local host on Linux
    v4("10.0.0.0/8", "private"),
    v4("100.64.0.0/10", "shared"), // carrier-grade NAT
    v4("127.0.0.0/8", "loopback"),
    v4("169.254.0.0/16", "link-local"), // also cloud metadata services (169.254.169.254)
    v4("172.16.0.0/12", "private"),
    v4("192.0.0.0/24", "reserved"),
    v4("192.0.2.0/24", "reserved"),
    v4("192.88.99.0/24", "reserved"),
    v4("192.168.0.0/16", "private"),
    v4("198.18.0.0/15", "reserved"),
    v4("198.51.100.0/24", "reserved"),
    v4("203.0.113.0/24", "reserved"),
    v4("224.0.0.0/4", "multicast"),
    v4("240.0.0.0/4", "reserved") // and 255.255.255.255
];

/** IPv6 ranges that are not the public internet; those that embed an IPv4 address are classified by it. */
const ipv6Ranges: readonly Range[] = [
    v6("::/128", "unspecified"),
    v6("::1/128", "loopback"),
    v6("100::/64", "reserved"), // discard
    v6("2001:db8::/32", "reserved"), // documentation
    v6("fc00::/7", "unique-local"),
    v6("fe80::/10", "link-local"),
    v6("fec0::/10", "private"), // deprecated site-local
    v6("ff00::/8", "multicast")
];

/** Prefixes whose low bits carry an IPv4 address that is the real destination. */
const embeddedIpv4: ReadonlyArray<{range: Range, shift: bigint}> = [
    {range: v6("::ffff:0:0/96", "reserved"), shift: 0n}, // IPv4-mapped
    {range: v6("::/96", "reserved"), shift: 0n}, // IPv4-compatible (deprecated)
    {range: v6("64:ff9b::/96", "reserved"), shift: 0n}, // NAT64
    {range: v6("64:ff9b:1::/48", "reserved"), shift: 0n}, // local-use NAT64
    {range: v6("2002::/16", "reserved"), shift: 80n} // 6to4
];

/** Classifies an IPv4 or IPv6 address (without brackets); anything that is not one is `invalid`. */
export function classifyAddress(address: string): AddressClass {
    const family = net.isIP(address);
    if (family === 4)
        return classifyIpv4(ipv4ToNumber(address));
    if (family !== 6)
        return "invalid";

    const value = ipv6ToBigInt(address);
    if (value == null)
        return "invalid";
    for (const range of ipv6Ranges)
        if (inRange(value, range))
            return range.kind;
    for (const {range, shift} of embeddedIpv4)
        if (inRange(value, range))
            return classifyIpv4(Number((value >> shift) & 0xffff_ffffn));
    return "public";
}

function classifyIpv4(value: number): AddressClass {
    for (const range of ipv4Ranges)
        if (inRange(BigInt(value), range))
            return range.kind;
    return "public";
}

function inRange(value: bigint, range: Range) {
    const hostBits = BigInt(range.bits - range.prefix);
    return value >> hostBits === range.base >> hostBits;
}

function ipv4ToNumber(address: string): number {
    return address.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** The 128-bit value of an IPv6 address, with an IPv4 tail (`::ffff:1.2.3.4`) and a zone (`%eth0`) handled. */
function ipv6ToBigInt(address: string): bigint | null {
    let text = address.split("%")[0]!.toLowerCase();
    const ipv4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
    if (ipv4Tail != null) {
        const value = ipv4ToNumber(ipv4Tail[1]!);
        text = `${text.slice(0, -ipv4Tail[1]!.length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
    }
    const halves = text.split("::");
    if (halves.length > 2)
        return null;
    const head = halves[0] === "" ? [] : halves[0]!.split(":");
    const tail = halves.length === 2 ? (halves[1] === "" ? [] : halves[1]!.split(":")) : [];
    const missing = 8 - head.length - tail.length;
    if ((halves.length === 1 && missing !== 0) || missing < 0)
        return null;
    const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
    let value = 0n;
    for (const group of groups) {
        if (!/^[0-9a-f]{1,4}$/.test(group))
            return null;
        value = (value << 16n) | BigInt(parseInt(group, 16));
    }
    return value;
}
