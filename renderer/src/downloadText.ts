/** Saves `text` as a file the browser downloads (the desktop shell's download handling applies). */
export function downloadText(fileName: string, mimeType: string, text: string) {
    const url = URL.createObjectURL(new Blob([text], {type: `${mimeType};charset=utf-8`}));
    const link = document.createElement("a");
    link.href = url;
    link.download = fileName;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
