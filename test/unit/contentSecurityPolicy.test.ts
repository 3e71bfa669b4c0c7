import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {contentSecurityPolicy, rendererMetaPolicy} from "../../src/core/common/contentSecurityPolicy.js";
import {repoRoot} from "../helpers/testModel.js";

describe("one Content-Security-Policy", () => {
    it("the renderer's meta tag says exactly what the shared definition says", () => {
        const html = fs.readFileSync(path.join(repoRoot, "renderer", "index.html"), "utf8");
        const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
        expect(meta?.[1]).toBe(rendererMetaPolicy);
    });

    it("differs between the desktop app and web mode only in where the page may connect", () => {
        const app = contentSecurityPolicy({connectSrc: ["'self'"]});
        const web = contentSecurityPolicy({connectSrc: ["ws://127.0.0.1:4000"]});
        expect(app.replace("connect-src 'self'", "")).toBe(web.replace("connect-src ws://127.0.0.1:4000", ""));
        expect(app).toContain("frame-ancestors 'none'");
        expect(rendererMetaPolicy).not.toContain("frame-ancestors");
    });
});
