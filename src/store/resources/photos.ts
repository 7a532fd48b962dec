/**
 * The animals' photos: their table, and the store handlers reach as `deps.photos`
 * (src/domain/contract.ts), on either SQL dialect through one query path. A photo is one row, written by
 * one statement: a replacement is the old row or the new one, never half of each, whatever kills
 * the process. Inside a unit of work (an animal created with its photo) the statement is one of
 * the unit's transaction (../queries/unitOfWork.ts).
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { isForeignKeyViolation } from '../queries/constraints.js';
import { prepare } from '../queries/prepared.js';
import type { ResourceContext } from '../resource.js';
import type { Tables as PetTables } from './pets.js';

/** The table of src/store/migrations/0007_pet_photos.ts, as Kysely sees it. */
export type Tables = {
  pet_photos: {
    pet_id: number;
    media_type: string;
    bytes: Buffer;
    size: number;
    /** SHA-256 of `bytes`, hex. */
    sha256: string;
    updated_at: string;
  };
};

export interface Photo {
  bytes: Buffer;
  mediaType: string;
  /** SHA-256 of the bytes, hex: what the answer's entity tag is derived from. */
  sha256: string;
  updatedAt: string;
}

export interface NewPhoto {
  bytes: Buffer;
  mediaType: string;
}

/** A photo's read: the photo, or which of the two is missing. */
export type PhotoLookup = { found: 'photo'; photo: Photo } | { found: 'no_photo' } | { found: 'no_pet' };

export interface PhotoStore {
  /** Stores the animal's photo, replacing any before it; 'no_pet' when no animal has that id (nothing stored). */
  put(petId: number, photo: NewPhoto): Promise<'stored' | 'no_pet'>;
  get(petId: number): Promise<PhotoLookup>;
  /** Removes the animal's photo, if it has one (before the animal itself: the photo references it). */
  remove(petId: number): Promise<void>;
}

export function open({ db: core, dialect }: ResourceContext): PhotoStore {
  // The animals' table too: a photo is stored only for an animal that exists.
  const db = core.withTables<Tables & PetTables>();
  type Put = { petId: number; mediaType: string; bytes: Buffer; size: number; sha256: string; updatedAt: string };
  // One statement: the row comes from the animal's own row, so an unknown id inserts nothing; an
  // existing photo is replaced in place. PostgreSQL types a bound value in a
  // select list as text unless told otherwise, hence the casts; SQLite takes them as they are.
  const bytesOf = (value: unknown) => (dialect === 'postgres' ? sql`cast(${value} as bytea)` : sql`${value}`);
  const textOf = (value: unknown) => (dialect === 'postgres' ? sql`cast(${value} as text)` : sql`${value}`);
  const integerOf = (value: unknown) => (dialect === 'postgres' ? sql`cast(${value} as integer)` : sql`${value}`);
  const petExists = prepare<{ petId: number }, { id: number }>(db, (bind) => db.selectFrom('pets').select('id').where('id', '=', bind('petId')));
  const upsert = prepare<Put, never>(db, (bind) =>
    db
      .insertInto('pet_photos')
      .columns(['pet_id', 'media_type', 'bytes', 'size', 'sha256', 'updated_at'])
      .expression(
        db
          .selectFrom('pets')
          .select([
            'pets.id',
            textOf(bind('mediaType')).as('media_type'),
            bytesOf(bind('bytes')).as('bytes'),
            integerOf(bind('size')).as('size'),
            textOf(bind('sha256')).as('sha256'),
            textOf(bind('updatedAt')).as('updated_at'),
          ])
          .where('pets.id', '=', bind('petId')),
      )
      .onConflict((conflict) =>
        conflict.column('pet_id').doUpdateSet((eb) => ({
          media_type: eb.ref('excluded.media_type'),
          bytes: eb.ref('excluded.bytes'),
          size: eb.ref('excluded.size'),
          sha256: eb.ref('excluded.sha256'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      ),
  );
  // The animal and its photo in one read: a missing animal and a missing photo are told apart.
  type Row = { pet_id: number; media_type: string | null; bytes: Buffer | Uint8Array | null; sha256: string | null; updated_at: string | null };
  const byPet = prepare<{ petId: number }, Row>(db, (bind) =>
    db
      .selectFrom('pets')
      .leftJoin('pet_photos', 'pet_photos.pet_id', 'pets.id')
      .select(['pets.id as pet_id', 'pet_photos.media_type', 'pet_photos.bytes', 'pet_photos.sha256', 'pet_photos.updated_at'])
      .where('pets.id', '=', bind('petId')),
  );
  const removeOf = prepare<{ petId: number }, never>(db, (bind) => db.deleteFrom('pet_photos').where('pet_id', '=', bind('petId')));
  return {
    async remove(petId) {
      await removeOf({ petId });
    },
    async put(petId, { bytes, mediaType }) {
      // Asked first, instead of RETURNING from the upsert: SQLite's RETURNING cost 0.4 ms more of
      // CPU per 1 MiB photo (docs/performance.md). The upsert still takes its row from the
      // animal's, so no photo is stored for an animal removed in between.
      if ((await petExists({ petId })).length === 0) return 'no_pet';
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      try {
        await upsert({ petId, mediaType, bytes, size: bytes.length, sha256, updatedAt: new Date().toISOString() });
      } catch (error) {
        // PostgreSQL: the animal was removed (deletePet) after the upsert read its row, and the
        // reference check waited for that removal to commit. The answer is the removal's: no animal.
        if (isForeignKeyViolation(error)) return 'no_pet';
        throw error;
      }
      return 'stored';
    },
    async get(petId) {
      const [row] = await byPet({ petId });
      if (row === undefined) return { found: 'no_pet' };
      if (row.bytes === null || row.media_type === null || row.sha256 === null || row.updated_at === null) return { found: 'no_photo' };
      // node-postgres gives a Buffer for bytea, better-sqlite3 for a BLOB; PGlite's adapter a Uint8Array.
      const bytes = Buffer.isBuffer(row.bytes) ? row.bytes : Buffer.from(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
      return { found: 'photo', photo: { bytes, mediaType: row.media_type, sha256: row.sha256, updatedAt: row.updated_at } };
    },
  };
}
