import {describe, expect, it} from "vitest";
import {classifyAddress} from "../../src/core/node/models/classifyAddress.js";

describe("classifyAddress: what the download policy treats as the public internet", () => {
    it.each([
        ["93.184.215.14", "public"], ["8.8.8.8", "public"], ["2606:4700::1111", "public"], ["2a00:1450:4001:82b::200e", "public"],
        ["127.0.0.1", "loopback"], ["127.255.255.254", "loopback"], ["::1", "loopback"], ["0:0:0:0:0:0:0:1", "loopback"],
        ["10.0.0.1", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.10.1", "private"],
        ["100.64.0.1", "shared"], ["100.127.255.255", "shared"],
        ["169.254.169.254", "link-local"], ["fe80::1", "link-local"], ["fe80::1%eth0", "link-local"], ["febf::1", "link-local"],
        ["fc00::1", "unique-local"], ["fd12:3456::1", "unique-local"],
        ["0.0.0.0", "unspecified"], ["0.1.2.3", "unspecified"], ["::", "unspecified"],
        ["224.0.0.251", "multicast"], ["239.255.255.250", "multicast"], ["ff02::fb", "multicast"],
        ["255.255.255.255", "reserved"], ["240.0.0.1", "reserved"], ["192.0.2.1", "reserved"], ["198.18.0.1", "reserved"], ["2001:db8::1", "reserved"],
        // IPv4 inside IPv6: the embedded address decides.
        ["::ffff:127.0.0.1", "loopback"], ["::ffff:7f00:1", "loopback"], ["::ffff:10.0.0.1", "private"], ["::ffff:a9fe:a9fe", "link-local"],
        ["::ffff:8.8.8.8", "public"], ["::10.0.0.1", "private"], ["64:ff9b::192.168.0.1", "private"], ["64:ff9b::8.8.8.8", "public"],
        ["2002:c0a8:0101::1", "private"], ["2002:0808:0808::1", "public"],
        ["not an address", "invalid"], ["1.2.3", "invalid"], ["::ffff::1", "invalid"]
    ])("%s is %s", (address, expected) => {
        expect(classifyAddress(address)).toBe(expected);
    });

    it("172.15.x and 172.32.x, 100.63.x and 100.128.x are public: the private ranges end where RFC 1918 and RFC 6598 say", () => {
        for (const address of ["172.15.255.255", "172.32.0.0", "100.63.255.255", "100.128.0.0", "11.0.0.0", "192.169.0.0"])
            expect(classifyAddress(address), address).toBe("public");
    });
});
