/** The S3 door's reading of XML bodies, by tables: the shapes documents are read into, and what is refused. */
import t from 'tap'
import { Readable } from 'node:stream'
import { elementsOf, MAX_DEPTH, readXmlBody, scanMarkup, XML_BODY_LIMITS, type XmlDocumentRoot } from '../../src/s3/xml.js'
import { S3Error } from '../../src/s3/errors.js'

const read = async (text: string | Buffer, root: XmlDocumentRoot = 'Delete'): Promise<unknown> =>
  await readXmlBody(Readable.from([Buffer.from(text)]), root)

/** How `text` is answered: 'read', or the error's code and message. */
async function refusal (text: string | Buffer, root: XmlDocumentRoot = 'Delete'): Promise<string> {
  try {
    await read(text, root)
    return 'read'
  } catch (err) {
    return err instanceof S3Error ? `${err.code}: ${err.message}` : String(err)
  }
}

/** Plain objects, for t.same. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

t.test('documents are read into strings, objects and lists', async t => {
  const cases: Array<[string, unknown]> = [
    ['<Delete><Object><Key>a</Key></Object></Delete>', { Object: [{ Key: 'a' }] }],
    ['\ufeff  <?xml version="1.0" encoding="UTF-8"?>\n<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>0001</Key></Object><Object><Key> b </Key></Object></Delete>\n',
      { Quiet: 'true', Object: [{ Key: '0001' }, { Key: ' b ' }] }],
    ['<Delete>\n  <Object>\n    <Key>k</Key>\n  </Object>\n</Delete>', { Object: [{ Key: 'k', '#text': '\n    \n  ' }], '#text': '\n  \n' }],
    ['<s3:Delete xmlns:s3="x"><s3:Object><s3:Key>k</s3:Key></s3:Object></s3:Delete>', { Object: [{ Key: 'k' }] }],
    ['<Delete><K>a<![CDATA[<&>]]>&amp;&lt;&gt;&quot;&apos;&#x41;&#66;&#x1F600;&#0000065;&#34;<!-- c --></K></Delete>', { K: 'a<&>&<>"\'AB\u{1F600}A"' }],
    ['<Delete><K/><E></E><C><!-- only a comment --></C></Delete>', { K: '', E: '', C: '' }],
    ['<Delete><A>1</A><A>2</A><A>3</A></Delete>', { A: ['1', '2', '3'] }],
    ['<Delete><Object/></Delete>', { Object: [''] }],
    ['<Delete><K>a<b>x</b>c</K></Delete>', { K: { b: 'x', '#text': 'ac' } }],
    ['<Delete a="1" b=\'2\' c = "&amp;&#34;" ><A d="x>y">x</A ></Delete >', { A: 'x' }],
    ['<Delete><?pi some data?><A>1</A></Delete><!-- after --><?pi?>', { A: '1' }],
    ['<Delete/>', {}],
    ['<Delete>text</Delete>', {}],
    [`${'<Delete>'}${'<a>'.repeat(MAX_DEPTH - 1)}x${'</a>'.repeat(MAX_DEPTH - 1)}</Delete>`, plain(JSON.parse(`${'{"a":'.repeat(MAX_DEPTH - 2)}{"a":"x"}${'}'.repeat(MAX_DEPTH - 2)}`))]
  ]
  for (const [text, value] of cases) t.same(plain(await read(text)), value, text.slice(0, 80))
  t.same(plain(await read('<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag></Part></CompleteMultipartUpload>', 'CompleteMultipartUpload')),
    { Part: [{ PartNumber: '1', ETag: '"e"' }] }, 'one Part is a list')
  t.same(plain(await read('<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>', 'CORSConfiguration')),
    { CORSRule: [{ AllowedOrigin: ['*'], AllowedMethod: ['GET'] }] }, 'one rule, origin and method are lists')
})

t.test('what XML forbids, and what S3 documents never hold, is MalformedXML', async t => {
  const malformed = [
    '', '   ', 'not xml', '<Delete>', '<Delete><B></Delete></B>', '<Delete></B>', '<Delete/><B/>', 'x<Delete/>', '<Delete/>x', '</Delete>', '<Delete></Delete', '<Delete',
    '<Delete>&foo;</Delete>', '<Delete>&nbsp;</Delete>', '<Delete>&#0;</Delete>', '<Delete>&#x1;</Delete>', '<Delete>&#xD800;</Delete>', '<Delete>&#xFFFE;</Delete>', '<Delete>&#x110000;</Delete>',
    '<Delete>&</Delete>', '<Delete>&amp</Delete>', '<Delete>& amp;</Delete>', '<Delete>&#;</Delete>', '<Delete>&#x;</Delete>', '<Delete>&#12345678;</Delete>', '<Delete>&#xg;</Delete>', '<Delete>&AMP;</Delete>',
    '<!DOCTYPE Delete><Delete/>', '<!DOCTYPE Delete [<!ENTITY a "b">]><Delete>&a;</Delete>', '<Delete><!ENTITY a "b"></Delete>', '<!doctype Delete><Delete/>',
    '<Delete><!-- x</Delete>', '<Delete><![CDATA[x</Delete>', '<Delete><?pi</Delete>', '<![CDATA[x]]><Delete/>', '<Delete><?xml version="1.0"?></Delete>', '<Delete/><?xml version="1.0"?>',
    '<Delete><? x?></Delete>', '<Delete a=1/>', '<Delete a="1"b="2"/>', '<Delete a="1" a="2"/>', '<Delete a/>', '<Delete a="<"/>', '<Delete a="&x;"/>', '<Delete a="1/>', '<Delete a="1" / >',
    '<__proto__/>', '<Delete><__proto__/></Delete>', '<Delete><x:__proto__/></Delete>', '<Delete><constructor/></Delete>', '<Delete><1A/></Delete>', '<Delete><-A/></Delete>', '<Delete><A:/></Delete>',
    '< Delete/>', '<Delete></ Delete>', '<Delete></Delete x="1">',
    '<Delete>\u0000</Delete>', '<Delete>\u0001</Delete>', '<Delete>\u001f</Delete>', '<Delete a="\u0008"/>', '<Delete>\uffff</Delete>'
  ]
  for (const text of malformed) t.equal(await refusal(text), 'MalformedXML: The XML you provided was not well-formed or did not validate against our published schema', JSON.stringify(text))
  t.equal(await refusal('<CORSConfiguration/>'), 'MalformedXML: The body must be a Delete document.', 'another document')
  t.equal(await refusal(Buffer.from([0x3c, 0x44, 0x3e, 0xff, 0x3c, 0x2f, 0x44, 0x3e])), 'MalformedXML: The XML body is not UTF-8.')
  t.equal(await refusal(`${'<a>'.repeat(MAX_DEPTH + 1)}${'</a>'.repeat(MAX_DEPTH + 1)}`), `MalformedXML: Elements nest at most ${MAX_DEPTH} deep.`)
  t.equal(await refusal(`<Delete>${'<a/>'.repeat(MAX_DEPTH + 10)}</Delete>`), 'read', 'empty elements do not nest')
  t.equal(await refusal(`<Delete>${'<Object><Key>k</Key></Object>'.repeat(XML_BODY_LIMITS.Delete.nodes / 2)}</Delete>`),
    `MalformedXML: A document holds at most ${XML_BODY_LIMITS.Delete.nodes} elements, comments and other markup.`)
  t.equal(await refusal(`<Delete>${'<!---->'.repeat(XML_BODY_LIMITS.Delete.nodes)}</Delete>`),
    `MalformedXML: A document holds at most ${XML_BODY_LIMITS.Delete.nodes} elements, comments and other markup.`, 'comments count')
  t.equal(await refusal(`<Delete>${'k'.repeat(XML_BODY_LIMITS.Delete.bytes)}</Delete>`), `MaxMessageLengthExceeded: A Delete body is limited to ${XML_BODY_LIMITS.Delete.bytes} bytes.`)
})

t.test('an element a document may not hold is named in the error, cut to 64 characters', async t => {
  t.throws(() => elementsOf({ Keey: 'a' }, ['Key'], 'Object'), { code: 'MalformedXML', message: 'Object has no element Keey: it holds Key.' })
  const long = 'N'.repeat(1_000_000)
  const err = (() => { try { elementsOf({ [long]: 'a' }, ['Key'], 'Object') } catch (err) { return err as S3Error } })()
  t.equal(err?.message, `Object has no element ${'N'.repeat(64)}…: it holds Key.`, 'a megabyte\'s name is not echoed whole')
})

t.test('the markup scan', async t => {
  const table: Array<[string, number, ReturnType<typeof scanMarkup>]> = [
    ['<R><A/><B/></R>', 3, 'ok'],
    ['<R><A/><B/><C/></R>', 3, 'too many nodes'],
    ['<R><!----><?p?><![CDATA[]]></R>', 3, 'too many nodes'],
    ['<?xml version="1.0"?><R/>', 1, 'too many nodes'],
    ['<R a=">&amp;"><A>&#x41;</A></R>', 2, 'ok'],
    [`${'<a>'.repeat(MAX_DEPTH)}${'</a>'.repeat(MAX_DEPTH)}`, 1000, 'ok'],
    [`${'<a>'.repeat(MAX_DEPTH + 1)}`, 1000, 'too deep'],
    [`${'<a x="/>">'.repeat(MAX_DEPTH + 1)}`, 1000, 'too deep'],
    ['<R a="&#0;"/>', 10, 'malformed'],
    ['<R a="x', 10, 'malformed'],
    ['<R><!DOCTYPE R></R>', 10, 'malformed']
  ]
  for (const [text, nodes, result] of table) t.equal(scanMarkup(text, nodes), result, text)
})
