/** The S3 door's XML reader, by tables: the shapes it reads documents into, and what it refuses. */
import t from 'tap'
import { MAX_DEPTH, readDocument, referenceValue, XmlReadError } from '../../src/s3/xml-reader.js'

const lists = new Set(['Delete.Object', 'R.L'])
/** Why `text` is refused ('read' when it is not). */
function refusal (text: string, maxNodes = 100): string {
  try {
    readDocument(text, lists, maxNodes)
    return 'read'
  } catch (err) {
    return err instanceof XmlReadError ? err.reason : String(err)
  }
}

/** Plain objects with prototypes, for t.same. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

t.test('documents are read into strings, objects and lists', async t => {
  const cases: Array<[string, string, unknown]> = [
    ['<Delete><Object><Key>a</Key></Object></Delete>', 'Delete', { Object: [{ Key: 'a' }] }],
    ['\ufeff  <?xml version="1.0" encoding="UTF-8"?>\n<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>0001</Key></Object><Object><Key> b </Key></Object></Delete>\n',
      'Delete', { Quiet: 'true', Object: [{ Key: '0001' }, { Key: ' b ' }] }],
    ['<Delete>\n  <Object>\n    <Key>k</Key>\n  </Object>\n</Delete>', 'Delete', { Object: [{ Key: 'k', '#text': '\n    \n  ' }], '#text': '\n  \n' }],
    ['<s3:Delete xmlns:s3="x"><s3:Object><s3:Key>k</s3:Key></s3:Object></s3:Delete>', 'Delete', { Object: [{ Key: 'k' }] }],
    ['<R><K>a<![CDATA[<&>]]>&amp;&lt;&gt;&quot;&apos;&#x41;&#66;&#x1F600;<!-- c --></K></R>', 'R', { K: 'a<&>&<>"\'AB\u{1F600}' }],
    ['<R><K/><E></E><C><!-- only a comment --></C></R>', 'R', { K: '', E: '', C: '' }],
    ['<R><A>1</A><A>2</A><A>3</A></R>', 'R', { A: ['1', '2', '3'] }],
    ['<R><L>1</L></R>', 'R', { L: ['1'] }],
    ['<R><K>a<b>x</b>c</K></R>', 'R', { K: { b: 'x', '#text': 'ac' } }],
    ['<R a="1" b=\'2\' c = "&amp;&#34;" ><A d="x>y">x</A ></R >', 'R', { A: 'x' }],
    ['<R><?pi some data?><A>1</A></R><!-- after --><?pi?>', 'R', { A: '1' }],
    ['<R/>', 'R', ''],
    ['<R>text</R>', 'R', 'text'],
    ['<R><constructor>c</constructor><toString/></R>', 'R', { constructor: 'c', toString: '' }]
  ]
  for (const [text, root, value] of cases) {
    const read = readDocument(text, lists, 100)
    t.equal(read.root, root, text)
    t.same(plain(read.value), value, text)
  }
  const object = readDocument('<R><A>1</A></R>', lists, 100).value as object
  t.equal(Object.getPrototypeOf(object), null, 'objects have no prototype')
})

t.test('what XML forbids, and what S3 documents never hold, is refused', async t => {
  const malformed = [
    '', '   ', 'not xml', '<A>', '<A><B></A></B>', '<A></B>', '<A/><B/>', 'x<A/>', '<A/>x', '</A>', '<A></A', '<A',
    '<A>&foo;</A>', '<A>&nbsp;</A>', '<A>&#0;</A>', '<A>&#x1;</A>', '<A>&#xD800;</A>', '<A>&#xFFFE;</A>', '<A>&#x110000;</A>',
    '<A>&</A>', '<A>&amp</A>', '<A>& amp;</A>', '<A>&#;</A>', '<A>&#x;</A>', '<A>&#12345678;</A>', '<A>&#xg;</A>', '<A>&AMP;</A>',
    '<!DOCTYPE A><A/>', '<!DOCTYPE A [<!ENTITY a "b">]><A>&a;</A>', '<A><!ENTITY a "b"></A>',
    '<A><!-- x</A>', '<A><![CDATA[x</A>', '<A><?pi</A>', '<![CDATA[x]]><A/>', '<A><?xml version="1.0"?></A>', '<A/><?xml version="1.0"?>',
    '<A><? x?></A>', '<A a=1/>', '<A a="1"b="2"/>', '<A a="1" a="2"/>', '<A a/>', '<A a="<"/>', '<A a="&x;"/>', '<A a="1/>', '<A a="1" / >',
    '<__proto__/>', '<R><__proto__/></R>', '<R><x:__proto__/></R>', '<1A/>', '<-A/>', '<A:/>', '< A/>', '<A></ A>', '<A></A x="1">'
  ]
  for (const text of malformed) {
    t.equal(refusal(text), 'malformed', JSON.stringify(text))
  }
  t.equal(refusal(`${'<a>'.repeat(MAX_DEPTH + 1)}${'</a>'.repeat(MAX_DEPTH + 1)}`, 1000), 'too deep')
  t.equal(readDocument(`${'<a>'.repeat(MAX_DEPTH)}x${'</a>'.repeat(MAX_DEPTH)}`, lists, 1000).root, 'a', `${MAX_DEPTH} deep is read`)
  t.equal(refusal('<R><A/><B/><C/></R>', 3), 'too many nodes', 'elements count')
  t.equal(refusal('<R><!----><?p?><![CDATA[]]></R>', 3), 'too many nodes', 'comments, instructions and CDATA count')
  t.equal(readDocument('<R><A/><B/></R>', lists, 3).root, 'R', 'within the budget')
  t.type(new XmlReadError('malformed', 'x'), Error)
})

t.test('references', async t => {
  const table: Array<[string, string | null]> = [
    ['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['#65', 'A'], ['#x41', 'A'], ['#X41', null], ['#0000065', 'A'],
    ['#9', '\t'], ['#10', '\n'], ['#13', '\r'], ['#8', null], ['#x7F', '\u007f'], ['#xD7FF', '\ud7ff'], ['#xD800', null], ['#xFFFD', '\ufffd'],
    ['#xFFFF', null], ['#x10FFFF', '\u{10ffff}'], ['#x110000', null], ['#1114111', '\u{10ffff}'], ['#1114112', null], ['#', null], ['#x', null],
    ['#12345678', null], ['#x1234567', null], ['nbsp', null], ['', null], ['constructor', null], ['#-1', null], ['#1e3', null]
  ]
  for (const [name, value] of table) t.equal(referenceValue(name), value, name)
})
