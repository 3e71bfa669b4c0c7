import {ModelDownloadError} from "./ModelDownloadError.js";

export type ResolvedDownloadUrl = {
    /** The `https://` or `http://` URL fetched. */
    url: string,
    /** The last segment of its path, decoded ("" when there is none). */
    fileName: string
};

const huggingFace = "https://huggingface.co";

/**
 * The URL a download fetches: an `http(s)://` URL as it is, or a Hugging Face URI that names its
 * file, `hf:<user>/<repo>/<path/file.gguf>[#<branch>]`, as node-llama-cpp maps it
 * (`https://huggingface.co/<user>/<repo>/resolve/<branch, default main>/<path>`). A URI without
 * a file (`hf:<user>/<repo>:Q4_K_M`) needs the Hugging Face API to pick one and is refused.
 */
export function resolveDownloadUrl(uri: string): ResolvedDownloadUrl {
    if (/^https?:\/\//i.test(uri))
        return {url: uri, fileName: lastSegment(uri)};

    const hf = /^(?:hf|huggingface):(?:\/\/)?([^/#]+)\/([^/#:]+)\/([^#]+?)(?:#(.*))?$/i.exec(uri);
    if (hf == null)
        throw new ModelDownloadError("DOWNLOAD_FAILED",
            `"${uri}" is not a URL this app downloads: give an https:// URL, or an hf: URI that names the file (hf:<user>/<repo>/<file>.gguf).`, {url: uri});
    const [, user, repo, filePath, branch] = hf;
    const parts = filePath!.split("/");
    const url = `${huggingFace}/${encodeURIComponent(user!)}/${encodeURIComponent(repo!)}/resolve/` +
        `${encodeURIComponent(branch != null && branch !== "" ? branch : "main")}/${parts.map(encodeURIComponent).join("/")}`;
    return {url, fileName: parts.at(-1)!};
}

function lastSegment(url: string): string {
    try {
        return decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
    } catch {
        return "";
    }
}
