import dns from "node:dns";
import fs from "node:fs";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, test} from "vitest";
import type {ApiEventPayload} from "../../src/core/common/api/index.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import type {DownloadFetcherOptions, ResolvedAddress} from "../../src/core/node/models/DownloadFetcher.js";
import {DownloadUrlRefusedError} from "../../src/core/node/models/DownloadUrlRefusedError.js";
import {ModelDownloader} from "../../src/core/node/models/ModelDownloader.js";
import {ModelLibrary} from "../../src/core/node/models/ModelLibrary.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {testModelSha256} from "../helpers/fakeAppHome.js";
import {RangeServer} from "../helpers/rangeServer.js";
import {selfSignedCertificate} from "../helpers/selfSignedCertificate.js";
import {setEnvForTest} from "../helpers/setEnvForTest.js";
import {connectToWebMode, startWebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";
import {testCatalogEntry, writeTestCatalog} from "../helpers/testCatalog.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const tlsNames = ["huggingface.co", "cdn-lfs.huggingface.co", "mirror.example"];
const hfToken = "hf_cleanroomTestToken0123456789";

/** A resolver for test names: each maps to the given addresses (or a function of the call count); the rest do not resolve. */
function testResolver(names: Record<string, string[] | ((call: number) => string[])>) {
    const calls: string[] = [];
    const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
        calls.push(hostname);
        const entry = names[hostname];
        if (entry == null)
            throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {code: "ENOTFOUND"});
        const addresses = typeof entry === "function" ? entry(calls.filter((name) => name === hostname).length) : entry;
        return addresses.map((address) => ({address, family: address.includes(":") ? 6 : 4}));
    };
    return {resolve, calls};
}

/**
 * `models.download {url}` fetches what the caller names, and in web mode (or from a compromised
 * renderer) the caller is a page. Real servers on 127.0.0.1 (http, and https under the names
 * Hugging Face uses) redirect to loopback, private, link-local, CGNAT, unique-local, unspecified,
 * multicast and IPv4-mapped targets, chain too many redirects, and are reached through names that
 * resolve to loopback or change their answer between two requests. Every one must be refused
 * before anything is fetched from the target, and HF_TOKEN must go to huggingface.co only.
 */
describe.skipIf(modelPath == null)("hostile download URLs", () => {
    let model: Buffer;
    let server: RangeServer;
    let tlsServer: RangeServer;
    let certificate: {key: string, cert: string};
    let refused = 0;
    let allowed = 0;
    const byReason = new Map<string, number>();

    const downloader = (fetcher: DownloadFetcherOptions = {}) => new ModelDownloader({dir: tempDir("hostile"), fetcher: {huggingFaceToken: null, ...fetcher}});

    /** The download must be refused by the policy with these details, and leave nothing in the folder. */
    async function expectRefused(run: ModelDownloader, url: string, details: Record<string, unknown>) {
        const error = await run.download({url}).catch((caught: unknown) => caught);
        expect(error, url).toBeInstanceOf(DownloadUrlRefusedError);
        expect((error as DownloadUrlRefusedError).details, url).toMatchObject(details);
        expect((error as Error).message).toMatch(/^The download was refused: .*\. Nothing was downloaded\.$/);
        expect(fs.readdirSync(run.dir)).toEqual([]);
        count((error as DownloadUrlRefusedError).details);
        return error as DownloadUrlRefusedError;
    }

    function count(details: Record<string, unknown>) {
        refused++;
        const reason = String(details.reason);
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
    }

    beforeAll(async () => {
        model = fs.readFileSync(modelPath!);
        certificate = selfSignedCertificate(tlsNames);
        server = await RangeServer.start({files: {"stories260K.gguf": model}});
        const port = server.port;
        server.options.redirects = {
            "to-private": "http://10.0.0.1/stories260K.gguf",
            "to-private-172": "http://172.16.5.4/stories260K.gguf",
            "to-private-192": "https://192.168.1.1/stories260K.gguf",
            "to-metadata": "http://169.254.169.254/latest/meta-data/",
            "to-cgnat": "http://100.64.0.1/stories260K.gguf",
            "to-unique-local": "http://[fd00::1]/stories260K.gguf",
            "to-link-local-v6": "http://[fe80::1]/stories260K.gguf",
            "to-unspecified": `http://0.0.0.0:${port}/stories260K.gguf`,
            "to-unspecified-v6": `http://[::]:${port}/stories260K.gguf`,
            "to-multicast": "http://224.0.0.251/stories260K.gguf",
            "to-mapped-private": "http://[::ffff:192.168.0.1]/stories260K.gguf",
            "to-mapped-metadata": "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
            "to-nat64-private": "http://[64:ff9b::a00:1]/stories260K.gguf",
            "to-decimal-private": "http://3232235777/stories260K.gguf", // 192.168.1.1 written as one number
            "to-file": "file:///etc/passwd",
            "to-public-http": "http://public.example/stories260K.gguf",
            "to-rebinding-name": `http://internal.example:${port}/stories260K.gguf`,
            ...Object.fromEntries(Array.from({length: 6}, (_, index) => [`chain6-${index}`, index === 5 ? "stories260K.gguf" : `chain6-${index + 1}`])),
            ...Object.fromEntries(Array.from({length: 5}, (_, index) => [`chain5-${index}`, index === 4 ? "stories260K.gguf" : `chain5-${index + 1}`])),
            "loop": "loop"
        };
        tlsServer = await RangeServer.start({files: {"stories260K.gguf": model}, tls: certificate});
        tlsServer.options.redirects = {
            "to-cdn": tlsServer.url("stories260K.gguf", "cdn-lfs.huggingface.co"),
            "to-mirror": tlsServer.url("stories260K.gguf", "mirror.example"),
            "to-hf": tlsServer.url("stories260K.gguf", "huggingface.co")
        };
    });

    afterAll(async () => {
        await server?.close();
        await tlsServer?.close();
        console.info(`[hostile URLs] ${refused} hostile URLs refused before anything was fetched from them ` +
            `(${[...byReason].map(([reason, count]) => `${count} ${reason}`).join(", ")}); ${allowed} allowed downloads completed`);
    });

    test("without the loopback option: http://, https://127.0.0.1, https://[::1], localhost and a name resolving to 127.0.0.1 are refused, and the server sees nothing", async () => {
        const {resolve, calls} = testResolver({"evil.example": ["127.0.0.1"], "split.example": ["93.184.215.14", "127.0.0.1"]});
        const strict = downloader({resolve});
        server.resetLog();
        await expectRefused(strict, server.url("stories260K.gguf"), {reason: "scheme", scheme: "http:", hop: 0});
        await expectRefused(strict, `https://127.0.0.1:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        await expectRefused(strict, `https://127.1:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        await expectRefused(strict, `https://[::1]:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        await expectRefused(strict, `https://[::ffff:127.0.0.1]:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        await expectRefused(strict, `https://localhost:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        await expectRefused(strict, `https://LOCALHOST.:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        await expectRefused(strict, `https://evil.example:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        // One public address and one loopback: refused, whichever the OS would pick.
        await expectRefused(strict, `https://split.example:${server.port}/stories260K.gguf`, {reason: "address", addressClass: "loopback"});
        expect(calls).toEqual(["evil.example", "split.example"]);
        expect(server.requests).toEqual([]);
    });

    test("with the loopback option (tests only): a redirect from 127.0.0.1 to any non-public address is refused before it is fetched", async () => {
        const {resolve} = testResolver({"public.example": ["93.184.215.14"]});
        const local = downloader({allowLoopback: true, resolve});
        const hostile: Array<[string, Record<string, unknown>]> = [
            ["to-private", {addressClass: "private"}],
            ["to-private-172", {addressClass: "private"}],
            ["to-private-192", {addressClass: "private"}],
            ["to-metadata", {addressClass: "link-local"}],
            ["to-cgnat", {addressClass: "shared"}],
            ["to-unique-local", {addressClass: "unique-local"}],
            ["to-link-local-v6", {addressClass: "link-local"}],
            ["to-unspecified", {addressClass: "unspecified"}],
            ["to-unspecified-v6", {addressClass: "unspecified"}],
            ["to-multicast", {addressClass: "multicast"}],
            ["to-mapped-private", {addressClass: "private"}],
            ["to-mapped-metadata", {addressClass: "link-local"}],
            ["to-nat64-private", {addressClass: "private"}],
            ["to-decimal-private", {addressClass: "private"}],
            ["to-file", {reason: "scheme", scheme: "file:"}],
            ["to-public-http", {reason: "scheme", scheme: "http:"}]
        ];
        for (const [name, details] of hostile) {
            server.resetLog();
            await expectRefused(local, server.url(name), {hop: 1, reason: "address", ...details});
            // Only the redirecting request reached a server; the target was never contacted (0.0.0.0 and [::] would reach this one).
            expect(server.requests.map((request) => request.path)).toEqual([name]);
        }
    });

    test("redirects are capped at 5: six are refused, a loop is refused, five are followed", async () => {
        const local = downloader({allowLoopback: true});
        await expectRefused(local, server.url("chain6-0"), {reason: "too-many-redirects", maxRedirects: 5, hop: 5});
        await expectRefused(local, server.url("loop"), {reason: "too-many-redirects", maxRedirects: 5});
        const result = await local.download({url: server.url("chain5-0"), sha256: testModelSha256});
        expect(result.sha256Checked).toBe(true);
        allowed++;
    });

    test("DNS rebinding: the connection goes to the address that was checked, and an answer that changes to a private address is refused", async () => {
        // The OS cannot resolve rebind.test (.test never resolves): the download works only if the
        // connection uses the address our check resolved, not a lookup of its own.
        await expect(dns.promises.lookup("rebind.test")).rejects.toThrow();
        const pinned = testResolver({"rebind.test": ["127.0.0.1"]});
        const result = await downloader({allowLoopback: true, resolve: pinned.resolve})
            .download({url: server.url("stories260K.gguf", "rebind.test"), sha256: testModelSha256});
        expect(result.sha256Checked).toBe(true);
        allowed++;
        server.resetLog();
        // One check per request: the probe and the transfer each resolved once, and each was checked.
        expect(pinned.calls.length).toBeGreaterThanOrEqual(2);

        // The name answers 127.0.0.1 for the first request (the probe), then a private address.
        const rebinding = testResolver({"rebind.test": (call) => (call === 1 ? ["127.0.0.1"] : ["192.168.1.20"])});
        await expectRefused(downloader({allowLoopback: true, resolve: rebinding.resolve}), server.url("stories260K.gguf", "rebind.test"),
            {reason: "address", addressClass: "private", hop: 0});
        expect(server.requests.map((request) => request.range)).toEqual(["bytes=0-0"]);

        // A redirect to a name that resolves to a private address.
        const internal = testResolver({"internal.example": ["10.1.2.3"]});
        await expectRefused(downloader({allowLoopback: true, resolve: internal.resolve}), server.url("to-rebinding-name"),
            {reason: "address", addressClass: "private", hop: 1});
    });

    test("HF_TOKEN goes to https://huggingface.co only: not to its CDN after a redirect, not to another host, not over http", async () => {
        const {resolve} = testResolver(Object.fromEntries(tlsNames.map((name) => [name, ["127.0.0.1"]])));
        const withToken = (options: DownloadFetcherOptions = {}) => new ModelDownloader({
            dir: tempDir("hf"), fetcher: {allowLoopback: true, resolve, extraCertificates: [certificate.cert], huggingFaceToken: hfToken, ...options}
        });
        const seen = async (url: string, options?: DownloadFetcherOptions, headers?: Record<string, string>) => {
            tlsServer.resetLog();
            server.resetLog();
            await withToken(options).download({url, sha256: testModelSha256, headers});
            allowed++;
            return [...tlsServer.requests, ...server.requests].map((request) => ({host: request.host.split(":")[0], authorization: request.authorization}));
        };

        const direct = await seen(tlsServer.url("stories260K.gguf", "huggingface.co"));
        expect(direct.length).toBeGreaterThanOrEqual(2);
        expect(direct.every((request) => request.host === "huggingface.co" && request.authorization === `Bearer ${hfToken}`)).toBe(true);

        const viaCdn = await seen(tlsServer.url("to-cdn", "huggingface.co"));
        expect(viaCdn.filter((request) => request.host === "huggingface.co").every((request) => request.authorization === `Bearer ${hfToken}`)).toBe(true);
        expect(viaCdn.filter((request) => request.host === "cdn-lfs.huggingface.co").length).toBeGreaterThan(0);
        expect(viaCdn.filter((request) => request.host !== "huggingface.co").every((request) => request.authorization == null)).toBe(true);

        expect((await seen(tlsServer.url("stories260K.gguf", "mirror.example"))).every((request) => request.authorization == null)).toBe(true);
        expect((await seen(tlsServer.url("stories260K.gguf", "cdn-lfs.huggingface.co"))).every((request) => request.authorization == null)).toBe(true);
        // A mirror redirecting to huggingface.co: the token is sent there, where it belongs.
        const toHf = await seen(tlsServer.url("to-hf", "mirror.example"));
        expect(toHf.filter((request) => request.host === "huggingface.co").every((request) => request.authorization === `Bearer ${hfToken}`)).toBe(true);
        expect(toHf.filter((request) => request.host === "mirror.example").every((request) => request.authorization == null)).toBe(true);
        // Plain http to the name: never the token.
        const overHttp = await seen(`http://huggingface.co:${server.port}/stories260K.gguf`, {resolve: testResolver({"huggingface.co": ["127.0.0.1"]}).resolve});
        expect(overHttp.every((request) => request.authorization == null)).toBe(true);
        // No token set: none sent.
        expect((await seen(tlsServer.url("stories260K.gguf", "huggingface.co"), {huggingFaceToken: null})).every((request) => request.authorization == null)).toBe(true);
        // A caller's own Authorization header stays with its origin: not sent on after a redirect to another host.
        const own = await seen(tlsServer.url("to-cdn", "mirror.example"), {huggingFaceToken: null}, {authorization: "Bearer mirror-key"});
        expect(own.filter((request) => request.host === "mirror.example").every((request) => request.authorization === "Bearer mirror-key")).toBe(true);
        expect(own.filter((request) => request.host !== "mirror.example").every((request) => request.authorization == null)).toBe(true);
    });

    test("HF_TOKEN is read from the environment by default", async () => {
        const restore = setEnvForTest("HF_TOKEN", hfToken);
        try {
            const {resolve} = testResolver({"huggingface.co": ["127.0.0.1"]});
            tlsServer.resetLog();
            await new ModelDownloader({dir: tempDir("hf-env"), fetcher: {allowLoopback: true, resolve, extraCertificates: [certificate.cert]}})
                .download({url: tlsServer.url("stories260K.gguf", "huggingface.co"), sha256: testModelSha256});
            allowed++;
            expect(tlsServer.requests.every((request) => request.authorization === `Bearer ${hfToken}`)).toBe(true);
        } finally {
            restore();
        }
    });

    test("the app's models.download: a URL and a catalog entry go through the same policy; refused at once when no DNS is needed", async () => {
        const dir = tempDir("hostile-app");
        const catalogPath = writeTestCatalog(path.join(dir, "catalog"), [
            testCatalogEntry({id: "loopback-http", name: "Loopback", url: server.url("stories260K.gguf"), fileName: "loopback.gguf"}),
            testCatalogEntry({id: "private-name", name: "Private", url: "https://intranet.example/stories260K.gguf", fileName: "private.gguf"})
        ]);
        const {resolve} = testResolver({"intranet.example": ["10.20.30.40"]});
        const core = Core.create(await loadLlama(), {database: path.join(dir, "core.db"), engine: {threads: 1, contextSize: 512}});
        const events: Array<ApiEventPayload<"models.downloadProgress">> = [];
        const service = createCoreService(core, {models: {dir: path.join(dir, "models"), catalogPath, downloader: {progressIntervalMs: 0, fetcher: {resolve}}}});
        service.events.on("models.downloadProgress", (event) => events.push(event));
        try {
            server.resetLog();
            for (const input of [{url: server.url("stories260K.gguf")}, {url: "https://[::ffff:10.0.0.1]/x.gguf"}, {catalogId: "loopback-http"}]) {
                const answer = await service.call("models.download", input);
                expect(answer, JSON.stringify(input)).toMatchObject({ok: false, error: {code: "DOWNLOAD_URL_REFUSED"}});
                count(answer.ok ? {} : answer.error.details);
            }
            const started = await service.call("models.download", {catalogId: "private-name"});
            expect(started.ok).toBe(true);
            await expect.poll(() => events.at(-1)?.state, {timeout: 20_000}).toBe("failed");
            expect(events.at(-1)!.error).toMatchObject({code: "DOWNLOAD_URL_REFUSED", details: {reason: "address", addressClass: "private"}});
            expect(events.at(-1)!.error!.message).not.toContain("10.20.30.40"); // the page learns the kind of address, not the address
            count(events.at(-1)!.error!.details);
            expect(server.requests).toEqual([]);
        } finally {
            service.dispose();
            await core.dispose();
        }

        // A library built for tests (loopback allowed) still refuses a private target.
        const library = new ModelLibrary({dir: path.join(dir, "lib"), downloader: {fetcher: {allowLoopback: true}}}, () => undefined);
        expect(() => library.startDownload({url: "http://192.168.0.10/model.gguf"})).toThrow(expect.objectContaining({code: "DOWNLOAD_URL_REFUSED"}));
        count({reason: "address"});
    });

    test("web mode, as a page would ask: models.download of loopback and private URLs over the WebSocket is refused", async () => {
        const dir = tempDir("hostile-web");
        const web = await startWebMode(["--no-model", "--db", path.join(dir, "web.db"), "--models-dir", path.join(dir, "models")],
            {CLEANROOM_HOME: path.join(dir, "home"), TMPDIR: dir});
        try {
            const {client, close} = await connectToWebMode(web);
            server.resetLog();
            for (const target of [server.url("stories260K.gguf"), `https://127.0.0.1:${server.port}/stories260K.gguf`, "https://169.254.169.254/x.gguf",
                `https://localhost:${server.port}/stories260K.gguf`, "https://[fc00::5]/x.gguf"]) {
                const error = await client.call("models.download", {url: target}).catch((caught: unknown) => caught);
                expect(error, target).toMatchObject({code: "DOWNLOAD_URL_REFUSED"});
                count((error as {details: Record<string, unknown>}).details);
            }
            expect(server.requests).toEqual([]);
            expect((await client.call("models.list", {})).downloads).toEqual([]);
            close();
        } finally {
            await web.stop();
        }
    }, 240_000);
});
