// Checks that every ```swift block of README.md and of the DocC articles appears verbatim in the sources of the
// StimpakDocSnippets target, which `.ci/run` builds with warnings as errors: so the documentation's code compiles.
//
//   swift .ci/check-doc-snippets.swift            (from the repository's root)
//
// A block matches when its lines appear as consecutive lines of one source file, each indented by the same
// whitespace prefix (a snippet sits inside a function there). Its leading `import` lines are matched apart: each
// must be one of that file's lines (imports live at the top of a file). A block preceded by an HTML comment
// `<!-- not compiled: reason -->` (a manifest, a compile error shown on purpose) is skipped and listed.
import Foundation

let documents: [String] = {
    let catalog = "Sources/Stimpak/Stimpak.docc"
    let articles = (FileManager.default.enumerator(atPath: catalog)?.allObjects as? [String] ?? [])
        .filter { $0.hasSuffix(".md") }
        .sorted()
        .map { "\(catalog)/\($0)" }
    return ["README.md"] + articles
}()
let snippetFolder = "Sources/StimpakDocSnippets"

struct Snippet {
    let document: String
    let line: Int
    let lines: [String]
}

func lines(of path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
        exit(1)
    }
    return text.components(separatedBy: "\n")
}

/// The ```swift blocks of a Markdown file, and those it marks as not compiled.
func blocks(of document: String) -> (checked: [Snippet], skipped: [Snippet]) {
    var checked: [Snippet] = []
    var skipped: [Snippet] = []
    let text = lines(of: document)
    var index = 0
    while index < text.count {
        let fence = text[index]
        let indent = String(fence.prefix { $0 == " " })
        guard fence.dropFirst(indent.count) == "```swift" else {
            index += 1
            continue
        }
        let start = index
        var body: [String] = []
        index += 1
        while index < text.count && text[index].trimmingCharacters(in: .whitespaces) != "```" {
            let line = text[index]
            body.append(line.hasPrefix(indent) ? String(line.dropFirst(indent.count)) : line)
            index += 1
        }
        index += 1
        var previous = start - 1
        while previous >= 0 && text[previous].trimmingCharacters(in: .whitespaces).isEmpty { previous -= 1 }
        let snippet = Snippet(document: document, line: start + 1, lines: body)
        if previous >= 0 && text[previous].trimmingCharacters(in: .whitespaces).hasPrefix("<!-- not compiled:") {
            skipped.append(snippet)
        } else {
            checked.append(snippet)
        }
    }
    return (checked, skipped)
}

/// Whether `snippet` appears in `source`: its imports among the file's lines, the rest consecutive, equally indented.
func appears(_ snippet: Snippet, in source: [String]) -> Bool {
    var body = snippet.lines[...]
    var imports: [String] = []
    while let first = body.first, first.hasPrefix("import ") || (first.isEmpty && !imports.isEmpty) {
        if !first.isEmpty { imports.append(first) }
        body = body.dropFirst()
    }
    guard imports.allSatisfy(source.contains) else { return false }
    guard let first = body.first else { return true }
    let rest = Array(body.dropFirst())
    for (index, line) in source.enumerated() where line.hasSuffix(first) {
        let prefix = line.dropLast(first.count)
        guard prefix.allSatisfy({ $0 == " " }), index + rest.count < source.count else { continue }
        let matches = rest.enumerated().allSatisfy { offset, expected in
            let actual = source[index + 1 + offset]
            return expected.isEmpty ? actual.trimmingCharacters(in: .whitespaces).isEmpty : actual == prefix + expected
        }
        if matches { return true }
    }
    return false
}

let sources = (FileManager.default.enumerator(atPath: snippetFolder)?.allObjects as? [String] ?? [])
    .filter { $0.hasSuffix(".swift") }
    .sorted()
    .map { lines(of: "\(snippetFolder)/\($0)") }
guard !sources.isEmpty else {
    FileHandle.standardError.write(Data("no Swift sources in \(snippetFolder)\n".utf8))
    exit(1)
}

var missing: [Snippet] = []
var checkedCount = 0
for document in documents {
    let (checked, skipped) = blocks(of: document)
    checkedCount += checked.count
    missing += checked.filter { snippet in !sources.contains { appears(snippet, in: $0) } }
    for snippet in skipped { print("not compiled, as marked: \(snippet.document):\(snippet.line)") }
}
for snippet in missing {
    print("\(snippet.document):\(snippet.line): this ```swift block is not in \(snippetFolder) verbatim:")
    for line in snippet.lines.prefix(3) { print("    \(line)") }
}
if !missing.isEmpty {
    print("Copy each block into a function of \(snippetFolder) (or mark it <!-- not compiled: reason -->).")
    exit(1)
}
print("\(checkedCount) Swift snippets of \(documents.count) documents appear verbatim in \(snippetFolder).")
