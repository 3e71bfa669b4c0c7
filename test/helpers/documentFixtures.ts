// Documents made by the tests, good and hostile: PDFs (pdf-lib, or written object by object where
// pdf-lib cannot make the damage), DOCX (the `docx` package) and ZIP containers written by hand.
import zlib from "node:zlib";
import {Document, Packer, Paragraph, TextRun} from "docx";
import {unzipSync} from "fflate";
import {PDFDocument, StandardFonts} from "pdf-lib";

/** A PDF of `pageCount` pages, each with a line naming its page, and `sentences[n]` on page n. */
export async function textPdf(pageCount: number, sentences: Record<number, string> = {}): Promise<Uint8Array> {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    for (let page = 1; page <= pageCount; page++) {
        const drawn = pdf.addPage([595, 842]);
        drawn.drawText(`This is page ${page} of the report.`, {x: 50, y: 780, size: 12, font});
        const sentence = sentences[page];
        if (sentence != null)
            drawn.drawText(sentence, {x: 50, y: 740, size: 12, font});
    }
    return await pdf.save();
}

/** A "scan": two pages with a picture and shapes, and not one character of text. */
export async function imageOnlyPdf(): Promise<Uint8Array> {
    const pdf = await PDFDocument.create();
    const picture = await pdf.embedPng(grayPng(64, 64));
    for (let page = 0; page < 2; page++) {
        const drawn = pdf.addPage([595, 842]);
        drawn.drawImage(picture, {x: 40, y: 40, width: 515, height: 760});
        drawn.drawRectangle({x: 100, y: 100, width: 50, height: 20});
    }
    return await pdf.save();
}

/** A PDF written object by object with a correct cross-reference table (objects numbered from 1). */
export function handWrittenPdf(objects: string[], trailerExtra = ""): Uint8Array {
    let body = "%PDF-1.4\n";
    const offsets: number[] = [];
    objects.forEach((object, index) => {
        offsets.push(Buffer.byteLength(body, "latin1"));
        body += `${index + 1} 0 obj\n${object}\nendobj\n`;
    });
    const xref = Buffer.byteLength(body, "latin1");
    body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("")}`;
    body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra}>>\nstartxref\n${xref}\n%%EOF\n`;
    return Buffer.from(body, "latin1");
}

const pageWithText = (extra: string) => [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> ${extra}>>`,
    streamObject("BT /F1 12 Tf 50 780 Td (Quarterly figures) Tj ET"),
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
];

/**
 * A PDF under the standard security handler whose user password is not empty: readers must ask for
 * it (pdf-lib cannot encrypt, so the /Encrypt dictionary is written by hand; its /O and /U are
 * made-up hashes that no empty password matches).
 */
export function encryptedPdf(): Uint8Array {
    const hex = (seed: number) => Array.from({length: 32}, (_, index) => ((index * 37 + seed) % 256).toString(16).padStart(2, "0")).join("");
    return handWrittenPdf([...pageWithText(""), `<< /Filter /Standard /V 1 /R 2 /O <${hex(11)}> /U <${hex(101)}> /P -44 >>`],
        `/Encrypt 6 0 R /ID [<${hex(7).slice(0, 32)}> <${hex(7).slice(0, 32)}>] `);
}

/** A one-page PDF whose page holds an array nested `depth` deep and a dictionary nested as deep. */
export function deeplyNestedPdf(depth: number): Uint8Array {
    const arrays = "[".repeat(depth) + "]".repeat(depth);
    const dictionaries = "<< /A ".repeat(depth) + "1" + " >>".repeat(depth);
    return handWrittenPdf(pageWithText(`/Nested ${arrays} /Deep ${dictionaries} `));
}

function streamObject(content: string): string {
    return `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`;
}

/** A DOCX with these paragraphs, made by the `docx` package as Word would. */
export async function docxFile(paragraphs: string[]): Promise<Uint8Array> {
    const document = new Document({sections: [{children: paragraphs.map((text) => new Paragraph({children: [new TextRun(text)]}))}]});
    return new Uint8Array(await Packer.toBuffer(document));
}

type ZipPart = {name: string, data: Uint8Array, crc: number, size: number, declaredSize?: number};

/**
 * A DOCX zip bomb: a real DOCX whose word/document.xml is replaced by `inflatedBytes` of zeros
 * (deflated to about a thousandth of that, streamed so the test never holds them), its directory
 * declaring the true size, or `declaredSize` when it lies.
 */
export async function docxZipBomb(inflatedBytes: number, declaredSize?: number): Promise<Uint8Array> {
    const parts: ZipPart[] = Object.entries(unzipSync(await docxFile(["A harmless looking document."])))
        .filter(([name]) => name !== "word/document.xml")
        .map(([name, content]) => ({name, data: zlib.deflateRawSync(content), crc: zlib.crc32(content), size: content.byteLength}));
    const {data, crc} = await deflatedZeros(inflatedBytes);
    parts.push({name: "word/document.xml", data, crc, size: inflatedBytes, declaredSize});
    return zipArchive(parts);
}

const deflatedZerosMade = new Map<number, Promise<{data: Buffer, crc: number}>>();

/** `size` zero bytes deflated (level 9, about 1,000 to 1), streamed; made once per size and test file. */
function deflatedZeros(size: number): Promise<{data: Buffer, crc: number}> {
    const made = deflatedZerosMade.get(size) ?? (async () => {
        const zeros = Buffer.alloc(1 << 20);
        const deflate = zlib.createDeflateRaw({level: 9});
        const chunks: Buffer[] = [];
        deflate.on("data", (chunk: Buffer) => chunks.push(chunk));
        let crc = 0;
        for (let written = 0; written < size; written += zeros.byteLength) {
            const piece = zeros.subarray(0, Math.min(zeros.byteLength, size - written));
            crc = zlib.crc32(piece, crc);
            if (!deflate.write(piece))
                await new Promise((resolve) => deflate.once("drain", resolve));
        }
        await new Promise((resolve) => deflate.end(resolve));
        return {data: Buffer.concat(chunks), crc};
    })();
    deflatedZerosMade.set(size, made);
    return made;
}

/** A ZIP archive of deflated parts, written by hand so that its directory can say what a test wants. */
function zipArchive(parts: ZipPart[]): Uint8Array {
    const locals: Buffer[] = [];
    const directory: Buffer[] = [];
    let offset = 0;
    for (const part of parts) {
        const name = Buffer.from(part.name, "utf8");
        const size = part.declaredSize ?? part.size;
        // The local header and the directory entry share a run of fields (method to name length), 2 bytes further on in the entry.
        const describe = (header: Buffer, at: number) => {
            header.writeUInt16LE(8, at); // deflate
            header.writeUInt32LE(part.crc, at + 6);
            header.writeUInt32LE(part.data.byteLength, at + 10);
            header.writeUInt32LE(size, at + 14);
            header.writeUInt16LE(name.byteLength, at + 18);
        };
        const local = Buffer.alloc(30);
        local.writeUInt32LE(0x04034b50, 0);
        local.writeUInt16LE(20, 4);
        describe(local, 8);
        locals.push(local, name, Buffer.from(part.data));
        const entry = Buffer.alloc(46);
        entry.writeUInt32LE(0x02014b50, 0);
        entry.writeUInt16LE(20, 4);
        entry.writeUInt16LE(20, 6);
        describe(entry, 10);
        entry.writeUInt32LE(offset, 42);
        directory.push(entry, name);
        offset += local.byteLength + name.byteLength + part.data.byteLength;
    }
    const directoryBytes = Buffer.concat(directory);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(parts.length, 8);
    end.writeUInt16LE(parts.length, 10);
    end.writeUInt32LE(directoryBytes.byteLength, 12);
    end.writeUInt32LE(offset, 16);
    return Buffer.concat([...locals, directoryBytes, end]);
}

/** A grey PNG (8-bit greyscale), for a page that is all picture. */
function grayPng(width: number, height: number): Uint8Array {
    const chunk = (type: string, data: Buffer) => {
        const length = Buffer.alloc(4);
        length.writeUInt32BE(data.byteLength);
        const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(zlib.crc32(body));
        return Buffer.concat([length, body, crc]);
    };
    const header = Buffer.alloc(13);
    header.writeUInt32BE(width, 0);
    header.writeUInt32BE(height, 4);
    header[8] = 8; // bit depth
    header[9] = 0; // greyscale
    const rows = Buffer.alloc((width + 1) * height, 0x80);
    for (let row = 0; row < height; row++)
        rows[row * (width + 1)] = 0; // filter: none
    return Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        chunk("IHDR", header), chunk("IDAT", zlib.deflateSync(rows)), chunk("IEND", Buffer.alloc(0))
    ]);
}

const fillerWords = "fox bird tree river stone cloud garden lamp door window apple house".split(" ");

/** A text of `lines` lines of filler words (the same for a given `seed`), with `sentence` as line `at` (from 1). */
export function longText(lines: number, sentence: string, at: number, seed = 1): string {
    let state = seed;
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648);
    return Array.from({length: lines}, (_, index) => index + 1 === at ? sentence
        : Array.from({length: 10}, () => fillerWords[next() % fillerWords.length]).join(" ")).join("\n");
}
