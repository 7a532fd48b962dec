/**
 * XML as OpenAPI describes it with a schema's `xml` object (`name`, `wrapped`, `attribute`,
 * `namespace`, `prefix`), both ways: a value the handler answered written as XML, and an XML
 * request body read into the fields of its schema. The value's shape comes from the schema; the
 * bytes come from the fast-xml libraries (fast-xml-builder writes and escapes, fast-xml-validator
 * checks well-formedness, fast-xml-parser reads). What OpenAPI 3.1 leaves open is decided once:
 *
 * - the root element is the schema's `xml.name`, else the name of the component it is, else
 *   `root` (`problem` in RFC 9457's namespace for Problem Details, as its appendix writes it);
 * - an array at the root is always wrapped (XML has one root): in its `xml.name`, else `items`;
 * - an array's items are named by the items' `xml.name`, else by the property (OpenAPI's rule),
 *   else, at the root, by the items' component name, else `item`;
 * - a null or absent value is no element; `additionalProperties` beyond the schema are elements
 *   named by their keys.
 *
 * Read, every leaf is text: validation coerces it by its schema, as it does a form's fields. A
 * DOCTYPE (and with it every entity declaration: XXE, billion laughs) is refused before parsing;
 * only XML's five entities and character references are understood.
 */
import { EntityDecoder, XML as XML_ENTITIES } from '@nodable/entities';
import XMLBuilder from 'fast-xml-builder';
import { XMLParser } from 'fast-xml-parser';
import { SyntaxValidator } from 'fast-xml-validator';

export type Schema = Readonly<Record<string, unknown>>;
/** The name of the component a schema object is (`Pet`), for root and item element names. */
export type ComponentNames = ReadonlyMap<object, string>;

interface XmlObject {
  name?: string;
  wrapped?: boolean;
  attribute?: boolean;
  namespace?: string;
  prefix?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const xmlOf = (schema: Schema | undefined): XmlObject => (isRecord(schema?.xml) ? (schema.xml as XmlObject) : {});
const asSchema = (value: unknown): Schema | undefined => (isRecord(value) ? value : undefined);

/** RFC 9457 Appendix B: Problem Details in XML. */
const PROBLEM_NAMESPACE = 'urn:ietf:rfc:7807';
const ATTRIBUTE = '@_';
const TEXT = '#text';

/** A schema with its `allOf` members' properties folded in, and `oneOf`/`anyOf` alternatives' too (the value says which it is). */
function propertiesOf(schema: Schema | undefined, seen = new Set<Schema>()): Map<string, Schema> {
  const properties = new Map<string, Schema>();
  if (schema === undefined || seen.has(schema)) return properties;
  seen.add(schema);
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    const members = schema[key];
    if (Array.isArray(members)) for (const member of members) for (const [name, property] of propertiesOf(asSchema(member), seen)) properties.set(name, property);
  }
  if (isRecord(schema.properties)) for (const [name, property] of Object.entries(schema.properties)) properties.set(name, asSchema(property) ?? {});
  return properties;
}

const isArraySchema = (schema: Schema | undefined): boolean => schema !== undefined && (schema.type === 'array' || (Array.isArray(schema.type) && schema.type.includes('array')) || schema.items !== undefined);

const qualified = (name: string, xml: XmlObject): string => (xml.prefix ? `${xml.prefix}:${name}` : name);

/** The `xmlns` attribute a namespaced element declares, in the builder's form. */
function namespaceAttribute(xml: XmlObject, node: Record<string, unknown>): void {
  if (xml.namespace === undefined) return;
  node[xml.prefix ? `${ATTRIBUTE}xmlns:${xml.prefix}` : `${ATTRIBUTE}xmlns`] = xml.namespace;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));

export class XmlWriter {
  private readonly builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: ATTRIBUTE, textNodeName: TEXT, suppressEmptyNode: true });

  constructor(private readonly names: ComponentNames) {}

  /** The document for `value` described by `schema`; `problem` for RFC 9457's defaults. */
  document(value: unknown, schema: Schema | undefined, problem = false): string {
    const xml = xmlOf(schema);
    const componentName = schema === undefined ? undefined : this.names.get(schema);
    let name = xml.name ?? (problem ? 'problem' : componentName) ?? 'root';
    const rootXml: XmlObject = problem && xml.namespace === undefined ? { ...xml, namespace: PROBLEM_NAMESPACE } : xml;
    let root: unknown;
    if (isArraySchema(schema) || Array.isArray(value)) {
      const items = asSchema(schema?.items);
      const itemName = xmlOf(items).name ?? (items === undefined ? undefined : this.names.get(items)) ?? 'item';
      name = xml.name ?? 'items';
      const node: Record<string, unknown> = { [qualified(itemName, xmlOf(items))]: (Array.isArray(value) ? value : []).map((item) => this.node(item, items)) };
      namespaceAttribute(rootXml, node);
      root = node;
    } else {
      root = this.node(value, schema, rootXml);
    }
    return `<?xml version="1.0" encoding="UTF-8"?>${this.builder.build({ [qualified(name, rootXml)]: root }) as string}`;
  }

  /** An element's content in the builder's form: text, or an object of attributes and children. */
  private node(value: unknown, schema: Schema | undefined, xml: XmlObject = xmlOf(schema)): unknown {
    if (!isRecord(value)) {
      if (xml.namespace === undefined) return text(value);
      const node: Record<string, unknown> = { [TEXT]: text(value) };
      namespaceAttribute(xml, node);
      return node;
    }
    const node: Record<string, unknown> = {};
    namespaceAttribute(xml, node);
    const properties = propertiesOf(schema);
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined || member === null) continue;
      const property = properties.get(key);
      const propertyXml = xmlOf(property);
      const name = propertyXml.name ?? key;
      if (propertyXml.attribute === true && !isRecord(member) && !Array.isArray(member)) {
        node[ATTRIBUTE + qualified(name, propertyXml)] = text(member);
        continue;
      }
      if (Array.isArray(member)) {
        const items = asSchema(property?.items);
        const itemXml = xmlOf(items);
        const elements = member.filter((item) => item !== null && item !== undefined).map((item) => this.node(item, items));
        if (propertyXml.wrapped === true) {
          const wrapper: Record<string, unknown> = { [qualified(itemXml.name ?? name, itemXml)]: elements };
          namespaceAttribute(propertyXml, wrapper);
          node[qualified(name, propertyXml)] = wrapper;
        } else node[qualified(itemXml.name ?? name, itemXml)] = elements;
        continue;
      }
      node[qualified(name, propertyXml)] = this.node(member, property, propertyXml);
    }
    return node;
  }
}

/** Why an XML body cannot be read: its sentence for the 400. */
export class XmlRefused extends Error {}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: ATTRIBUTE,
  textNodeName: TEXT,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  removeNSPrefix: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // No DOCTYPE gets this far (readXml): only XML's own entities and character references remain.
  entityDecoder: new EntityDecoder({ namedEntities: XML_ENTITIES }),
});

/** `&name;` that is none of XML's five entities nor a character reference: only a DTD could define it. */
const UNDEFINED_ENTITY = /&(?!(?:lt|gt|amp|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/;

/** A parsed element's text (an element with attributes keeps it under `#text`). */
const textOf = (node: unknown): unknown => (isRecord(node) ? (node[TEXT] ?? (Object.keys(node).some((key) => !key.startsWith(ATTRIBUTE)) ? node : '')) : node);

const asList = (node: unknown): unknown[] => (node === undefined ? [] : Array.isArray(node) ? node : [node]);

/** The fields of `schema` read from a parsed element; leaves stay text. */
function fieldsOf(node: unknown, schema: Schema | undefined): unknown {
  const properties = propertiesOf(schema);
  if (properties.size === 0 || !isRecord(node)) return Array.isArray(node) ? node.map((item) => fieldsOf(item, undefined)) : textOf(node);
  const value: Record<string, unknown> = {};
  const taken = new Set<string>();
  for (const [key, property] of properties) {
    const xml = xmlOf(property);
    const name = xml.name ?? key;
    if (xml.attribute === true) {
      const attribute = node[ATTRIBUTE + name];
      taken.add(ATTRIBUTE + name);
      if (attribute !== undefined) value[key] = attribute;
      continue;
    }
    if (isArraySchema(property)) {
      const items = asSchema(property.items);
      const itemName = xmlOf(items).name ?? name;
      let elements: unknown[];
      if (xml.wrapped === true) {
        taken.add(name);
        const wrapper = node[name];
        if (wrapper === undefined) continue;
        elements = asList(isRecord(wrapper) ? wrapper[itemName] : undefined);
      } else {
        taken.add(itemName);
        if (node[itemName] === undefined) continue;
        elements = asList(node[itemName]);
      }
      value[key] = elements.map((element) => fieldsOf(element, items));
      continue;
    }
    taken.add(name);
    if (node[name] !== undefined) value[key] = fieldsOf(node[name], property);
  }
  // Elements the schema does not name stay, by their names, for validation to refuse.
  for (const [key, member] of Object.entries(node)) if (!taken.has(key) && !key.startsWith(ATTRIBUTE) && key !== TEXT) value[key] = fieldsOf(member, undefined);
  return value;
}

/** An XML document read into the fields `schema` describes (text leaves); throws XmlRefused. */
export function readXml(document: string, schema: Schema | undefined): unknown {
  if (/<!DOCTYPE/i.test(document)) throw new XmlRefused('declares a DOCTYPE: document type definitions and entity declarations are refused');
  if (UNDEFINED_ENTITY.test(document)) throw new XmlRefused('refers to an entity XML does not define (only &lt; &gt; &amp; &quot; &apos; and character references are read)');
  try {
    SyntaxValidator.validate(document);
  } catch (error) {
    throw new XmlRefused(`is not well-formed XML: ${error instanceof Error ? error.message : 'it does not parse'}`);
  }
  const parsed = parser.parse(document) as Record<string, unknown>;
  const roots = Object.keys(parsed).filter((key) => !key.startsWith('?'));
  if (roots.length !== 1 || Array.isArray(parsed[roots[0] as string])) throw new XmlRefused('is not well-formed XML: it must have exactly one root element');
  const root = parsed[roots[0] as string];
  if (isArraySchema(schema)) {
    // The root wraps the items, whatever their element's name.
    const [itemName] = isRecord(root) ? Object.keys(root).filter((key) => !key.startsWith(ATTRIBUTE) && key !== TEXT) : [];
    const items = asSchema(schema?.items);
    return itemName === undefined ? [] : asList((root as Record<string, unknown>)[itemName]).map((element) => fieldsOf(element, items));
  }
  return fieldsOf(root === '' ? {} : root, schema);
}
